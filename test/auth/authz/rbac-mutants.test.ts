/**
 * Kills the mutants of src/auth/authz/rbac-index.ts and rbac-rules.ts that survived the
 * authorization samples of `npm run mutate -- --module authz` (--sample 100, then a fresh
 * --sample 50 --seed 26; docs/testing.md): deletions remove exactly the deleted object, rules
 * that are not objects are dropped, and matching and covering (upstream RuleAllows, Covers,
 * BreakdownRule, CompactString) honour groups, resource names and non-resource URLs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../../src/api/identity.js';
import { RbacIndex } from '../../../src/auth/authz/rbac-index.js';
import { RbacAuthorizer } from '../../../src/auth/authz/rbac.js';
import {
  breakdownRule,
  compactRules,
  compactString,
  nonResourceURLMatches,
  ruleCovers,
  uncovered,
} from '../../../src/auth/authz/rbac-rules.js';
import type { Attributes } from '../../../src/auth/authz/attributes.js';
import { bindingTo, event, role } from '../../authz/helpers.js';

const G = 'rbac.authorization.plat.io';
const bob = { username: 'bob', groups: ['system:authenticated'] };
const bobRef = [{ kind: 'User', apiGroup: G, name: 'bob' }];

function setup() {
  const index = new RbacIndex(makeIdentity());
  index.load([]);
  const rbac = new RbacAuthorizer(index);
  type Obj = { metadata: { name: string; namespace?: string } };
  const put = (resource: string, obj: Obj) => index.apply([event('ADDED', resource, obj)]);
  const del = (resource: string, obj: Obj) => index.apply([event('DELETED', resource, obj)]);
  const can = (verb: string, resource: string, namespace?: string) => {
    const a: Attributes = {
      user: bob,
      verb,
      apiGroup: '',
      resource,
      resourceRequest: true,
      path: '',
      ...(namespace ? { namespace } : {}),
    };
    const d = rbac.authorize(a);
    // the index answers from memory: synchronously
    assert.ok(!(d instanceof Promise));
    return d.decision;
  };
  return { put, del, can, rbac };
}

test('deleting a RoleBinding leaves a Role of the same name and namespace granting through another binding', () => {
  const { put, del, can } = setup();
  put('roles', role('x', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'ns1'));
  put('rolebindings', bindingTo('x', 'Role', 'x', bobRef, 'ns1'));
  put('rolebindings', bindingTo('y', 'Role', 'x', bobRef, 'ns1'));
  del('rolebindings', bindingTo('x', 'Role', 'x', bobRef, 'ns1'));
  assert.equal(can('get', 'pods', 'ns1'), 'allow', 'role ns1/x still exists, bound by y');
});

test('deleting a ClusterRoleBinding stops its grant at once; deleting a RoleBinding of the same name does not', () => {
  const { put, del, can } = setup();
  put('clusterroles', role('pods', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]));
  put('clusterrolebindings', bindingTo('n', 'ClusterRole', 'pods', bobRef));
  put('roles', role('r', [{ verbs: ['list'], apiGroups: [''], resources: ['secrets'] }], 'ns1'));
  put('rolebindings', bindingTo('n', 'Role', 'r', bobRef, 'ns1'));
  del('rolebindings', bindingTo('n', 'Role', 'r', bobRef, 'ns1'));
  assert.equal(can('list', 'secrets', 'ns1'), 'noOpinion', 'the RoleBinding is gone');
  assert.equal(can('list', 'pods'), 'allow', 'the ClusterRoleBinding named n stays');
  del('clusterrolebindings', bindingTo('n', 'ClusterRole', 'pods', bobRef));
  assert.equal(can('list', 'pods'), 'noOpinion', 'the ClusterRoleBinding is gone');
});

test('breakdownRule keeps group, resource and verb in each per-name rule', () => {
  assert.deepEqual(
    breakdownRule({ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'], resourceNames: ['a', 'b'] }),
    [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['b'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: ['b'] },
    ],
  );
});

test('ruleCovers: another group is not covered; no names cover any name; other names do not', () => {
  const all = { verbs: ['*'], resources: ['*'] };
  assert.equal(
    ruleCovers({ ...all, apiGroups: ['apps'] }, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }),
    false,
  );
  assert.equal(
    ruleCovers({ ...all, apiGroups: ['*'] }, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }),
    true,
  );
  const sub = { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['b'] };
  assert.equal(ruleCovers({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, sub), true);
  assert.equal(ruleCovers({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }, sub), false);
  assert.equal(
    ruleCovers({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'] }, sub),
    true,
  );
  assert.deepEqual(
    uncovered(
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'] }],
    ),
    [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['b'] }],
  );
});

test('compactString names non-resource URLs as upstream', () => {
  assert.equal(
    compactString({ nonResourceURLs: ['/healthz', '/livez'], verbs: ['get'] }),
    '{NonResourceURLs:["/healthz" "/livez"], Verbs:["get"]}',
  );
});

test('rules that are not objects are dropped when a role is indexed (no failure, no grant)', () => {
  const { put, can } = setup();
  put('clusterroles', role('odd', [null, 'get', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }] as never));
  put('clusterrolebindings', bindingTo('odd', 'ClusterRole', 'odd', bobRef));
  assert.equal(can('list', 'secrets'), 'noOpinion');
  assert.equal(can('get', 'pods'), 'allow');
});

test('non-resource URLs: every trailing * is trimmed (Go strings.TrimRight), a * inside is literal', () => {
  assert.equal(nonResourceURLMatches({ nonResourceURLs: ['/healthz**'], verbs: ['get'] }, '/healthz/etcd'), true);
  assert.equal(nonResourceURLMatches({ nonResourceURLs: ['/logs*/x*'], verbs: ['get'] }, '/logs*/xyz'), true);
  assert.equal(nonResourceURLMatches({ nonResourceURLs: ['/logs*/x*'], verbs: ['get'] }, '/logs/xyz'), false);
});

test('ruleCovers: a URL without a trailing * covers that URL only, not longer ones', () => {
  const sub = { verbs: ['get'], nonResourceURLs: ['/healthz'] };
  assert.equal(ruleCovers({ verbs: ['get'], nonResourceURLs: ['/health'] }, sub), false);
  assert.equal(ruleCovers({ verbs: ['get'], nonResourceURLs: ['/health*'] }, sub), true);
  assert.equal(ruleCovers({ verbs: ['get'], nonResourceURLs: ['/healthz'] }, sub), true);
});

test('every RoleBinding of a namespace grants, not only the last indexed', () => {
  const { put, can } = setup();
  put('roles', role('pods', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'ns1'));
  put('roles', role('secrets', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }], 'ns1'));
  put('rolebindings', bindingTo('a', 'Role', 'pods', bobRef, 'ns1'));
  put('rolebindings', bindingTo('b', 'Role', 'secrets', bobRef, 'ns1'));
  assert.deepEqual([can('get', 'pods', 'ns1'), can('get', 'secrets', 'ns1')], ['allow', 'allow']);
});

test('compactRules merges verbs per group, resource and name, never across names', () => {
  assert.deepEqual(
    compactRules([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: ['b'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'], resourceNames: ['a'] },
    ]),
    [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: ['b'] },
    ],
  );
});

test('a binding to an unsupported role kind is reported with that kind in the denial reason', () => {
  const { put, rbac } = setup();
  put('clusterrolebindings', bindingTo('odd', 'Group', 'admins', bobRef));
  const d = rbac.authorize({ user: bob, verb: 'get', apiGroup: '', resource: 'pods', resourceRequest: true, path: '' });
  assert.ok(!(d instanceof Promise));
  assert.deepEqual(d, { decision: 'noOpinion', reason: 'RBAC: unsupported role reference kind: "Group"' });
});
