/**
 * Kills the mutants of src/auth/authz/escalation.ts that survived the authorization sample of
 * `npm run mutate -- --module authz --sample 100` and the fresh `--sample 50 --seed 27`
 * (docs/testing.md): updates are checked, `bind` on a Role is asked for on roles (not
 * clusterroles), `escalate` in the Role's namespace, and only a ClusterRole's aggregationRule
 * needs every permission.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PolicyRule } from '../../../src/auth/authz/rbac-rules.js';
import { bindingTo, escalationFixture, role } from '../../authz/helpers.js';

const G = 'rbac.authorization.plat.io';
const bob = { username: 'bob', groups: ['system:authenticated'] };

function setup() {
  const { check, put } = escalationFixture();
  /** a Role `name` in `namespace` with `rules`, bound to bob there */
  const grantInNs = (name: string, rules: PolicyRule[], namespace: string) => {
    put('roles', role(name, rules, namespace));
    put('rolebindings', bindingTo(name, 'Role', name, [{ kind: 'User', name: 'bob' }], namespace));
  };
  return { check, put, grantInNs };
}

const refusal = (fn: () => void): string => {
  try {
    fn();
  } catch (e) {
    const status = (e as { status: { code: number; message: string } }).status;
    assert.equal(status.code, 403);
    return status.message;
  }
  return assert.fail('expected a 403');
};

test('applies: an update of an RBAC object by a non-master is checked, as a create and a patch', () => {
  const { check } = setup();
  for (const verb of ['create', 'update', 'patch']) {
    for (const resource of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']) {
      assert.equal(check.applies(G, resource, '', verb, bob), true, `${verb} ${resource}`);
    }
  }
  for (const verb of ['get', 'delete', 'deletecollection', ''])
    assert.equal(check.applies(G, 'roles', '', verb, bob), false, verb);
  assert.equal(check.applies(G, 'roles', 'status', 'update', bob), false, 'a subresource is not checked');
});

test('bind on a Role is asked on roles: a namespaced bind grant lets a RoleBinding reference a Role whose rules are not held', () => {
  const { check, put, grantInNs } = setup();
  put('roles', role('secret-admin', [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }], 'ns1'));
  grantInNs(
    'binder',
    [{ verbs: ['bind'], apiGroups: [G], resources: ['roles'], resourceNames: ['secret-admin'] }],
    'ns1',
  );
  const w = { user: bob, resource: 'rolebindings', namespace: 'ns1', pathName: '' };
  void check.check(w, bindingTo('b', 'Role', 'secret-admin', [{ kind: 'User', name: 'carol' }], 'ns1'));
  // a ClusterRole of the same name is not covered by bind on roles
  put('clusterroles', role('secret-admin', [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }]));
  assert.match(
    refusal(() =>
      check.check(w, bindingTo('c', 'ClusterRole', 'secret-admin', [{ kind: 'User', name: 'carol' }], 'ns1')),
    ),
    /is attempting to grant RBAC permissions not currently held/,
  );
});

test("only a ClusterRole's aggregationRule needs every permission: a Role carrying one is checked by its rules only", () => {
  const { check, grantInNs } = setup();
  grantInNs('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'ns1');
  const aggregationRule = { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] };
  void check.check(
    { user: bob, resource: 'roles', namespace: 'ns1', pathName: '' },
    role('r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'ns1', { aggregationRule }),
  );
  assert.equal(
    refusal(() =>
      check.check(
        { user: bob, resource: 'clusterroles', namespace: '', pathName: '' },
        role('c', [], undefined, { aggregationRule }),
      ),
    ),
    `clusterroles.${G} "c" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
  );
});

test('escalate granted in one namespace lifts the role check of a Role there only', () => {
  const { check, grantInNs } = setup();
  grantInNs('escalator', [{ verbs: ['escalate'], apiGroups: [G], resources: ['roles'] }], 'ns1');
  const anything = role('r', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], 'ns1');
  void check.check({ user: bob, resource: 'roles', namespace: 'ns1', pathName: '' }, anything);
  assert.match(
    refusal(() =>
      check.check(
        { user: bob, resource: 'roles', namespace: 'ns2', pathName: '' },
        { ...anything, metadata: { name: 'r', namespace: 'ns2' } },
      ),
    ),
    /is attempting to grant RBAC permissions not currently held/,
  );
});
