/**
 * Escalation prevention: covering rules (upstream Covers), the refusal messages, and the
 * `escalate` and `bind` verbs that lift the checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactRules, compactString, uncovered, type PolicyRule } from '../../src/auth/authz/rbac-rules.js';
import { bindingTo, escalationFixture, role } from './helpers.js';

const G = 'rbac.authorization.plat.io';
const bob = { username: 'bob', groups: ['system:authenticated'] };

function setup() {
  const { check, put } = escalationFixture();
  const grant = (name: string, rules: PolicyRule[], namespace?: string) => {
    put('clusterroles', role(name, rules));
    if (namespace)
      put('rolebindings', bindingTo(name, 'ClusterRole', name, [{ kind: 'User', name: 'bob' }], namespace));
    else put('clusterrolebindings', bindingTo(name, 'ClusterRole', name, [{ kind: 'User', name: 'bob' }]));
  };
  return { check, put, grant };
}

const refusal = (fn: () => void): string => {
  try {
    fn();
  } catch (e: any) {
    assert.equal(e.status.code, 403);
    assert.equal(e.status.reason, 'Forbidden');
    return e.status.message;
  }
  return assert.fail('expected a 403');
};

test('covers: verbs, groups, resources, */subresource, names and URLs', () => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['d1'] },
    { verbs: ['get'], nonResourceURLs: ['/healthz/*'] },
  ];
  assert.deepEqual(
    uncovered(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods', 'pods/status', 'nodes/status'] }]),
    [],
  );
  assert.deepEqual(
    uncovered(owner, [
      { verbs: ['update', 'delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['d1'] },
    ]),
    [],
  );
  assert.deepEqual(uncovered(owner, [{ verbs: ['get'], nonResourceURLs: ['/healthz/etcd'] }]), []);
  assert.deepEqual(
    uncovered(owner, [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }]),
    [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }],
    'names do not cover all names',
  );
  assert.deepEqual(uncovered(owner, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]), [
    { verbs: ['get'], nonResourceURLs: ['/healthz'] },
  ]);
  const missing = uncovered(owner, [{ verbs: ['watch', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]);
  assert.deepEqual(compactRules(missing).map(compactString).sort(), [
    '{APIGroups:[""], Resources:["pods"], Verbs:["watch" "delete"]}',
    '{APIGroups:[""], Resources:["secrets"], Verbs:["watch" "delete"]}',
  ]);
});

test("a role with rules the requester does not hold is refused with upstream's message; held rules pass", () => {
  const { check, grant } = setup();
  grant('pods-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], 'ns1');
  const w = { user: bob, resource: 'roles', namespace: 'ns1', pathName: '' };
  void check.check(w, role('ok', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]));
  assert.equal(
    refusal(() =>
      check.check(w, role('r', [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }])),
    ),
    `roles.${G} "r" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
  );
  assert.match(
    refusal(() =>
      check.check({ ...w, namespace: 'ns2' }, role('r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])),
    ),
    /not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get"\]\}$/,
    'held in ns1 only',
  );
  assert.match(
    refusal(() =>
      check.check(
        { ...w, resource: 'clusterroles', namespace: '' },
        role('c', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
      ),
    ),
    new RegExp(`^clusterroles.${G} "c" is forbidden: user "bob"`),
    'a RoleBinding does not cover a ClusterRole',
  );
});

test('escalate on roles lifts the role check; an aggregationRule needs every permission', () => {
  const { check, grant } = setup();
  grant('escalator', [{ verbs: ['escalate'], apiGroups: [G], resources: ['clusterroles'] }]);
  void check.check(
    { user: bob, resource: 'clusterroles', namespace: '', pathName: '' },
    role('any', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
  );
  assert.match(
    refusal(() =>
      check.check(
        { user: bob, resource: 'roles', namespace: 'x', pathName: '' },
        role('r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
      ),
    ),
    /attempting to grant RBAC permissions not currently held/,
    'escalate on clusterroles is not escalate on roles',
  );
  const { check: c2, grant: g2 } = setup();
  g2('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
  assert.equal(
    refusal(() =>
      c2.check(
        { user: bob, resource: 'clusterroles', namespace: '', pathName: '' },
        { metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [] } },
      ),
    ),
    `clusterroles.${G} "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
  );
});

test('bindings: the referenced role must be covered, or the requester may bind it (names honoured); missing roles refused', () => {
  const { check, grant, put } = setup();
  grant('pods-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'ns1');
  put('clusterroles', role('secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
  put('clusterroles', role('pod-getter', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]));
  const w = { user: bob, resource: 'rolebindings', namespace: 'ns1', pathName: '' };
  const rb = (roleName: string, kind = 'ClusterRole') =>
    bindingTo('b', kind, roleName, [{ kind: 'User', name: 'carol' }], 'ns1');
  void check.check(w, rb('pod-getter'));
  assert.equal(
    refusal(() => check.check(w, rb('secret-reader'))),
    `rolebindings.${G} "b" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
  );
  assert.equal(
    refusal(() => check.check(w, rb('nope'))),
    `rolebindings.${G} "b" is forbidden: clusterroles.${G} "nope" not found`,
  );
  assert.equal(
    refusal(() => check.check(w, rb('nope', 'Role'))),
    `rolebindings.${G} "b" is forbidden: roles.${G} "nope" not found`,
  );
  grant(
    'binder',
    [{ verbs: ['bind'], apiGroups: [G], resources: ['clusterroles'], resourceNames: ['secret-reader'] }],
    'ns1',
  );
  void check.check(w, rb('secret-reader'));
  put('clusterroles', role('other', [{ verbs: ['delete'], apiGroups: [''], resources: ['secrets'] }]));
  assert.match(
    refusal(() => check.check(w, rb('other'))),
    /not currently held/,
    'bind is limited by resourceNames',
  );
  assert.match(
    refusal(() =>
      check.check(
        { ...w, resource: 'clusterrolebindings', namespace: '' },
        bindingTo('c', 'ClusterRole', 'secret-reader', []),
      ),
    ),
    /not currently held/,
    'bind in ns1 does not allow a ClusterRoleBinding',
  );
});

test('applies: creates, updates and patches of the four RBAC kinds by non-masters only', () => {
  const { check } = setup();
  assert.equal(check.applies(G, 'roles', '', 'create', bob), true);
  assert.equal(check.applies(G, 'clusterrolebindings', '', 'patch', bob), true);
  assert.equal(check.applies(G, 'roles', '', 'delete', bob), false);
  assert.equal(check.applies(G, 'roles', '', 'update', { username: 'root', groups: ['system:masters'] }), false);
  assert.equal(check.applies('apps', 'roles', '', 'create', bob), false);
});

test('updates: changing only ownerReferences or finalizers is never checked; removing an aggregationRule is checked as using one', () => {
  const { check, grant } = setup();
  grant('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
  const w = { user: bob, resource: 'clusterroles', namespace: '', pathName: 'big' };
  const stored = {
    metadata: { name: 'big', uid: 'u1', resourceVersion: '7', creationTimestamp: '2024-01-01T00:00:00Z' },
    rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  };
  const gcOnly = {
    metadata: {
      name: 'big',
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'x' }],
      finalizers: ['f'],
    },
    rules: stored.rules,
  };
  void check.check(w, gcOnly, stored);
  assert.match(
    refusal(() => check.check(w, { ...gcOnly, metadata: { ...gcOnly.metadata, labels: { a: 'b' } } }, stored)),
    /not currently held/,
    'any other change is checked',
  );
  assert.match(
    refusal(() => check.check(w, gcOnly)),
    /not currently held/,
    'a create is always checked',
  );
  const aggregated = {
    metadata: { name: 'agg' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
    rules: [],
  };
  assert.equal(
    refusal(() => check.check({ ...w, pathName: 'agg' }, { metadata: { name: 'agg' }, rules: [] }, aggregated)),
    `clusterroles.${G} "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
  );
});
