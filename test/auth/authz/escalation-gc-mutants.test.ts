/**
 * `onlyGCFieldsChanged` (upstream IsOnlyMutatingGCFields), which lets an update of an RBAC
 * object that changes only ownerReferences, finalizers or server-set metadata skip the
 * escalation check: the comparison ignores key order, null values and empty maps and lists
 * (a PUT omits what the stored object has empty), and nothing else. Found untested by the
 * mutation sample of the authorization code (seed 28).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onlyGCFieldsChanged } from '../../../src/auth/authz/escalation.js';

const role = (rules: unknown, metadata: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'rbac.plat.io/v1',
  kind: 'Role',
  metadata: { name: 'r', namespace: 'ns', ...metadata },
  rules,
  ...extra,
});
const RULE = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };

test('ownerReferences, finalizers and server-set metadata are the only changes ignored', () => {
  const old = role([RULE], { uid: 'u1', resourceVersion: '5', creationTimestamp: 't', generation: 1 });
  const gc = role([RULE], {
    uid: 'u2',
    resourceVersion: '9',
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'x' }],
    finalizers: ['f'],
    managedFields: [{ manager: 'm' }],
  });
  assert.equal(onlyGCFieldsChanged(gc, old), true);
  assert.equal(onlyGCFieldsChanged(role([RULE], { labels: { a: 'b' } }), old), false, 'a label');
  assert.equal(onlyGCFieldsChanged(role([{ ...RULE, verbs: ['list'] }]), old), false, 'a verb');
  assert.equal(onlyGCFieldsChanged(role([RULE, RULE]), old), false, 'one more rule');
});

test('key order does not matter, at any depth', () => {
  const old = role([RULE], { labels: { a: '1', b: '2' } });
  const reordered = {
    rules: [{ verbs: ['get'], resources: ['pods'], apiGroups: [''] }],
    metadata: { labels: { b: '2', a: '1' }, namespace: 'ns', name: 'r' },
    kind: 'Role',
    apiVersion: 'rbac.plat.io/v1',
  };
  assert.equal(onlyGCFieldsChanged(reordered, old), true);
});

test('null values and empty maps and lists count as absent; zero, false and "" do not', () => {
  const old = role([RULE]);
  assert.equal(onlyGCFieldsChanged(role([RULE], { labels: {}, annotations: null }, { extra: [] }), old), true);
  assert.equal(onlyGCFieldsChanged(role([{ ...RULE, resourceNames: [], nonResourceURLs: null }]), old), true);
  assert.equal(onlyGCFieldsChanged(role([RULE], {}, { nested: { inner: {}, gone: null } }), old), true);
  for (const v of [0, false, '', 'x', 1])
    assert.equal(onlyGCFieldsChanged(role([RULE], {}, { field: v }), old), false, JSON.stringify(v));
});

test('scalars compare by value and type; lists by order; a list is not a map', () => {
  const with_ = (v: unknown) => role([RULE], {}, { field: v });
  assert.equal(onlyGCFieldsChanged(with_(5), with_(5)), true);
  assert.equal(onlyGCFieldsChanged(with_(5), with_(6)), false, 'numbers');
  assert.equal(onlyGCFieldsChanged(with_('5'), with_(5)), false, 'a string is not a number');
  assert.equal(onlyGCFieldsChanged(with_('ab'), with_('ba')), false, 'strings');
  assert.equal(onlyGCFieldsChanged(with_(['a', 'b']), with_(['b', 'a'])), false, 'list order');
  assert.equal(onlyGCFieldsChanged(with_(['a']), with_({ 0: 'a' })), false, 'a list against a map');
  assert.equal(onlyGCFieldsChanged(with_([null]), with_([])), false, 'a list holding null is not empty');
  assert.equal(onlyGCFieldsChanged(with_({ a: { b: 1 } }), with_({ a: { b: 2 } })), false, 'a nested value');
});
