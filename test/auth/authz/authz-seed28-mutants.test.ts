/**
 * Kills survivors of the fourth authorization sample (`npm run mutate -- --module authz
 * --sample 50 --seed 28`; docs/testing.md) outside the escalation check's comparison
 * (escalation-gc-mutants.test.ts): the name a list takes from its `metadata.name` field
 * selector must be a valid path segment (upstream path.IsValidPathSegmentName: not `.`, not
 * `..`, no `/` or `%`), and the aggregation controller is handed exactly the ClusterRoles that
 * carry an aggregationRule, with the rules their selectors gather now.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../../src/api/identity.js';
import { parseRequestInfo } from '../../../src/http/request-info.js';
import { attributesFor } from '../../../src/auth/authz/attributes.js';
import { RbacIndex } from '../../../src/auth/authz/rbac-index.js';
import { event } from '../../authz/helpers.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const listName = (name: string) => {
  const u = new URL(
    `/api/v1/namespaces/ns1/pods?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    'http://x',
  );
  const a = attributesFor(parseRequestInfo('GET', u.pathname, u.searchParams), bob, u.searchParams);
  assert.equal(a.verb, 'list');
  return a.name;
};

test('a list named by its field selector: "." and ".." are no names, other dotted names are', () => {
  assert.equal(listName('.'), undefined);
  assert.equal(listName('..'), undefined);
  assert.equal(listName('a%b'), undefined);
  for (const ok of ['...', '.a', 'a..b', 'p']) assert.equal(listName(ok), ok);
});

test('aggregatedRoles: only ClusterRoles with an aggregationRule, their stored and gathered rules', () => {
  const index = new RbacIndex(makeIdentity());
  index.load([]);
  const read = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
  const write = { apiGroups: [''], resources: ['pods'], verbs: ['create'] };
  const clusterRole = (name: string, labels: Record<string, string>, rules: unknown[], extra: object = {}) =>
    event('ADDED', 'clusterroles', { metadata: { name, labels }, rules, ...extra });
  index.apply([
    clusterRole('reader', { 'agg/view': 'true' }, [read]),
    clusterRole('writer', {}, [write]),
    clusterRole('view', {}, [write], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'agg/view': 'true' } }] },
    }),
  ]);
  assert.deepEqual(index.aggregatedRoles(), [{ name: 'view', stored: [write], effective: [read] }]);
});
