/**
 * The default role table: every default ClusterRole and binding exists with the bootstrapping
 * label (core components and controllers included), and the reach of view, edit, admin and
 * cluster-admin bound in one namespace (view cannot read secrets, edit cannot touch roles,
 * admin cannot write resource quotas or its namespace).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../src/api/identity.js';
import { defaultPolicy } from '../../src/auth/authz/bootstrap-policy.js';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';

const RBAC = '/apis/rbac.authorization.plat.io/v1';
const G = 'rbac.authorization.plat.io';
let s: TokenServer;
let tls: TlsClient;
const as = (who: string, method: string, path: string, body?: unknown) =>
  request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${who}-token` });

before(async () => {
  s = await startTokenServer(
    ['viewer', 'editor', 'adminer', 'owner'].map((u) => `${u}-token,${u},uid-${u}`).join('\n') + '\n',
  );
  tls = s.tls;
  for (const ns of ['team', 'elsewhere'])
    assert.equal((await plain(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  for (const [user, role] of [
    ['viewer', 'view'],
    ['editor', 'edit'],
    ['adminer', 'admin'],
    ['owner', 'cluster-admin'],
  ]) {
    const rb = {
      metadata: { name: user },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'User', apiGroup: G, name: user }],
    };
    assert.equal((await plain(s.url, 'POST', `${RBAC}/namespaces/team/rolebindings`, rb)).status, 201);
  }
  assert.equal(
    (await plain(s.url, 'POST', '/api/v1/namespaces/team/secrets', { metadata: { name: 'sec' }, data: {} })).status,
    201,
  );
});
after(async () => {
  await s?.close();
});

test('the full default table, labelled platform.io/bootstrapping=rbac-defaults, with component and controller roles bound as upstream', async () => {
  const roles = (
    await plain(s.url, 'GET', `${RBAC}/clusterroles?labelSelector=platform.io%2Fbootstrapping%3Drbac-defaults`)
  ).json.items.map((r: any) => r.metadata.name);
  for (const n of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:basic-user',
    'system:discovery',
    'system:public-info-viewer',
    'system:monitoring',
    'system:node-bootstrapper',
    'system:auth-delegator',
    'system:node',
    'system:node-proxier',
    'system:plat-scheduler',
    'system:plat-controller-manager',
    'system:volume-scheduler',
    'system:controller:namespace-controller',
    'system:controller:generic-garbage-collector',
    'system:controller:deployment-controller',
  ]) {
    assert.ok(roles.includes(n), n);
  }
  const expected = defaultPolicy(makeIdentity());
  assert.equal(roles.length, expected.clusterRoles.length);
  assert.ok(roles.filter((n: string) => n.startsWith('system:controller:')).length >= 30);
  const bindings = (
    await plain(s.url, 'GET', `${RBAC}/clusterrolebindings?labelSelector=platform.io%2Fbootstrapping%3Drbac-defaults`)
  ).json.items;
  assert.equal(bindings.length, expected.clusterRoleBindings.length);
  const gc = bindings.find((b: any) => b.metadata.name === 'system:controller:generic-garbage-collector');
  assert.deepEqual(gc.subjects, [
    { kind: 'ServiceAccount', name: 'generic-garbage-collector', namespace: 'plat-system' },
  ]);
  const sched = bindings.find((b: any) => b.metadata.name === 'system:plat-scheduler');
  assert.deepEqual(sched.subjects, [{ apiGroup: G, kind: 'User', name: 'system:plat-scheduler' }]);
  const delegator = (await plain(s.url, 'GET', `${RBAC}/clusterroles/system:auth-delegator`)).json;
  assert.deepEqual(delegator.rules, [
    { verbs: ['create'], apiGroups: ['authentication.plat.io'], resources: ['tokenreviews'] },
    { verbs: ['create'], apiGroups: ['authorization.plat.io'], resources: ['subjectaccessreviews'] },
  ]);
});

test("namespaced defaults: the bootstrap controllers' Roles in the system and public namespaces, bound to their service accounts", async () => {
  const signer = (await plain(s.url, 'GET', `${RBAC}/namespaces/plat-public/roles/system:controller:bootstrap-signer`))
    .json;
  assert.equal(signer.metadata.labels['platform.io/bootstrapping'], 'rbac-defaults');
  const rb = (await plain(s.url, 'GET', `${RBAC}/namespaces/plat-system/rolebindings/system:controller:token-cleaner`))
    .json;
  assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'token-cleaner', namespace: 'plat-system' }]);
  assert.deepEqual(rb.roleRef, { apiGroup: G, kind: 'Role', name: 'system:controller:token-cleaner' });
  const can = async (user: string, namespace: string, verb: string, resource: string, name: string) =>
    (
      await plain(s.url, 'POST', '/apis/authorization.plat.io/v1/subjectaccessreviews', {
        kind: 'SubjectAccessReview',
        apiVersion: 'authorization.plat.io/v1',
        spec: { user, groups: ['system:serviceaccounts'], resourceAttributes: { namespace, verb, resource, name } },
      })
    ).json.status.allowed;
  const sa = 'system:serviceaccount:plat-system:bootstrap-signer';
  assert.equal(await can(sa, 'plat-public', 'update', 'configmaps', 'cluster-info'), true);
  assert.equal(await can(sa, 'plat-public', 'update', 'configmaps', 'other'), false);
  assert.equal(await can(sa, 'plat-system', 'list', 'secrets', ''), true);
  assert.equal(
    await can(
      'system:serviceaccount:plat-system:token-cleaner',
      'plat-system',
      'delete',
      'secrets',
      'bootstrap-token-abcdef',
    ),
    true,
  );
  assert.equal(
    await can('system:serviceaccount:plat-system:token-cleaner', 'default', 'delete', 'secrets', 'x'),
    false,
  );
});

test('view reads most objects but not secrets, and writes nothing', async () => {
  assert.equal((await as('viewer', 'GET', '/api/v1/namespaces/team/pods')).status, 200);
  assert.equal((await as('viewer', 'GET', '/api/v1/namespaces/team/configmaps')).status, 200);
  assert.equal((await as('viewer', 'GET', '/apis/apps/v1/namespaces/team/deployments')).status, 200);
  assert.equal((await as('viewer', 'GET', '/api/v1/namespaces/team')).status, 200, 'its namespace');
  const secret = await as('viewer', 'GET', '/api/v1/namespaces/team/secrets/sec');
  assert.equal(secret.status, 403);
  assert.equal(
    secret.json.message,
    'secrets "sec" is forbidden: User "viewer" cannot get resource "secrets" in API group "" in the namespace "team"',
  );
  assert.equal((await as('viewer', 'GET', `${RBAC}/namespaces/team/roles`)).status, 403);
  assert.equal(
    (await as('viewer', 'POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'v' }, data: {} })).status,
    403,
  );
  assert.equal(
    (await as('viewer', 'GET', '/api/v1/namespaces/elsewhere/pods')).status,
    403,
    "only in the binding's namespace",
  );
});

test('edit writes objects and reads secrets, but cannot touch roles or bindings', async () => {
  assert.equal(
    (await as('editor', 'POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'e' }, data: {} })).status,
    201,
  );
  assert.equal((await as('editor', 'GET', '/api/v1/namespaces/team/secrets/sec')).status, 200);
  assert.equal((await as('editor', 'GET', `${RBAC}/namespaces/team/roles`)).status, 403);
  const role = await as('editor', 'POST', `${RBAC}/namespaces/team/roles`, { metadata: { name: 'r' }, rules: [] });
  assert.equal(role.status, 403);
  assert.equal(
    role.json.message,
    'roles.rbac.authorization.plat.io is forbidden: User "editor" cannot create resource "roles" in API group "rbac.authorization.plat.io" in the namespace "team"',
  );
  assert.equal((await as('editor', 'DELETE', `${RBAC}/namespaces/team/rolebindings/viewer`)).status, 403);
  assert.equal(
    (
      await as('editor', 'POST', '/api/v1/namespaces/team/resourcequotas', {
        metadata: { name: 'q' },
        spec: { hard: { pods: '5' } },
      })
    ).status,
    403,
  );
});

test('admin manages roles and bindings in its namespace, reads but cannot write resource quotas or its namespace', async () => {
  const role = await as('adminer', 'POST', `${RBAC}/namespaces/team/roles`, {
    metadata: { name: 'pod-reader' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  assert.equal(role.status, 201, role.text);
  const rb = {
    metadata: { name: 'rb' },
    roleRef: { apiGroup: G, kind: 'Role', name: 'pod-reader' },
    subjects: [{ kind: 'User', apiGroup: G, name: 'viewer' }],
  };
  assert.equal((await as('adminer', 'POST', `${RBAC}/namespaces/team/rolebindings`, rb)).status, 201);
  assert.equal((await as('adminer', 'GET', '/api/v1/namespaces/team/resourcequotas')).status, 200);
  const quota = await as('adminer', 'POST', '/api/v1/namespaces/team/resourcequotas', {
    metadata: { name: 'q' },
    spec: { hard: { pods: '5' } },
  });
  assert.equal(quota.status, 403);
  assert.equal(
    quota.json.message,
    'resourcequotas is forbidden: User "adminer" cannot create resource "resourcequotas" in API group "" in the namespace "team"',
  );
  assert.equal((await as('adminer', 'DELETE', '/api/v1/namespaces/team')).status, 403);
  assert.equal(
    (
      await as('adminer', 'POST', `${RBAC}/namespaces/team/roles`, {
        metadata: { name: 'nodes' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
      })
    ).status,
    403,
    'escalation',
  );
  assert.equal((await as('adminer', 'GET', '/api/v1/namespaces/elsewhere/pods')).status, 403);
});

test('cluster-admin in a RoleBinding: everything in that namespace, including quotas and the namespace itself, nothing elsewhere', async () => {
  assert.equal(
    (
      await as('owner', 'POST', '/api/v1/namespaces/team/resourcequotas', {
        metadata: { name: 'q2' },
        spec: { hard: { pods: '5' } },
      })
    ).status,
    201,
  );
  assert.equal((await as('owner', 'GET', '/api/v1/namespaces/team')).status, 200);
  assert.equal((await as('owner', 'GET', '/api/v1/namespaces/elsewhere/secrets')).status, 403);
  assert.equal((await as('owner', 'GET', '/api/v1/nodes')).status, 403);
});
