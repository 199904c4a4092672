/**
 * RBAC end to end over HTTPS with static-token users: bindings that take effect at once, the
 * reach of the default roles, impersonation through RBAC, the access reviews, and escalation
 * prevention on create, update and patch.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';

const G = 'rbac.authorization.plat.io';
const RBAC = `/apis/${G}/v1`;
const AUTHZ = '/apis/authorization.plat.io/v1';
let s: TokenServer;
let tls: TlsClient;
const as = (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${token}`, ...headers });
const root = (method: string, path: string, body?: unknown) => as('root-token', method, path, body);
const binding = (name: string, kind: string, roleName: string, subjects: object[]) => ({
  metadata: { name },
  roleRef: { apiGroup: G, kind, name: roleName },
  subjects,
});
const userSubject = (name: string) => ({ kind: 'User', apiGroup: G, name });

async function created(p: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await p;
  assert.equal(r.status, 201, r.text);
}

before(async () => {
  s = await startTokenServer(
    'bob-token,bob,uid-b\ncarol-token,carol,uid-c,dev\nroot-token,root,uid-r,system:masters\n',
  );
  tls = s.tls;
  for (const name of ['ns1', 'ns2']) await created(root('POST', '/api/v1/namespaces', { metadata: { name } }));
  // carol (group dev) edits ns1; bob administers ns2
  await created(
    root(
      'POST',
      `${RBAC}/namespaces/ns1/rolebindings`,
      binding('dev-edit', 'ClusterRole', 'edit', [{ kind: 'Group', apiGroup: G, name: 'dev' }]),
    ),
  );
  await created(
    root(
      'POST',
      `${RBAC}/namespaces/ns2/rolebindings`,
      binding('bob-admin', 'ClusterRole', 'admin', [userSubject('bob')]),
    ),
  );
});
after(async () => {
  await s?.close();
});

test('a RoleBinding to view grants at once, in its namespace only, without secrets; deleting it revokes at once', async () => {
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/ns1/pods')).status, 403);
  await created(
    root(
      'POST',
      `${RBAC}/namespaces/ns1/rolebindings`,
      binding('bob-view', 'ClusterRole', 'view', [userSubject('bob')]),
    ),
  );
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/ns1/pods')).status, 200);
  assert.equal(
    (await as('bob-token', 'GET', '/api/v1/namespaces/ns1')).status,
    200,
    'a namespace is readable from a binding inside it',
  );
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/default/pods')).status, 403);
  assert.equal((await as('bob-token', 'GET', '/api/v1/pods')).status, 403, 'no cluster-wide list');
  assert.equal(
    (await as('bob-token', 'GET', '/api/v1/namespaces/ns1/secrets')).status,
    403,
    'view cannot read secrets',
  );
  assert.equal(
    (await as('bob-token', 'DELETE', '/api/v1/namespaces/ns1/pods/p')).json.message,
    'pods "p" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace "ns1"',
  );
  assert.equal((await root('DELETE', `${RBAC}/namespaces/ns1/rolebindings/bob-view`)).status, 200);
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/ns1/pods')).status, 403);
});

test('edit writes workloads and secrets but cannot touch roles; admin writes roles but not resource quotas', async () => {
  await created(as('carol-token', 'POST', '/api/v1/namespaces/ns1/configmaps', { metadata: { name: 'c' } }));
  await created(as('carol-token', 'POST', '/api/v1/namespaces/ns1/secrets', { metadata: { name: 's' } }));
  assert.equal((await as('carol-token', 'GET', '/api/v1/namespaces/ns1/secrets/s')).status, 200);
  assert.equal((await as('carol-token', 'GET', `${RBAC}/namespaces/ns1/roles`)).status, 403);
  assert.equal(
    (await as('carol-token', 'POST', `${RBAC}/namespaces/ns1/roles`, { metadata: { name: 'r' }, rules: [] })).status,
    403,
  );
  assert.equal((await as('carol-token', 'GET', '/api/v1/namespaces/ns2/configmaps')).status, 403);
  await created(
    as('bob-token', 'POST', `${RBAC}/namespaces/ns2/roles`, {
      metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    }),
  );
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/ns2/resourcequotas')).status, 200);
  const quota = await as('bob-token', 'POST', '/api/v1/namespaces/ns2/resourcequotas', {
    metadata: { name: 'q' },
    spec: { hard: { pods: '1' } },
  });
  assert.equal(
    quota.json.message,
    'resourcequotas is forbidden: User "bob" cannot create resource "resourcequotas" in API group "" in the namespace "ns2"',
  );
  assert.equal((await as('bob-token', 'DELETE', '/api/v1/namespaces/ns2')).status, 403, 'nor the namespace itself');
});

test('impersonation is authorized by RBAC, value by value', async () => {
  await created(
    root('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'imp' },
      rules: [
        { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['alice'] },
        { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['readers'] },
        { apiGroups: ['authentication.plat.io'], resources: ['userextras/scopes'], verbs: ['impersonate'] },
      ],
    }),
  );
  await created(
    root('POST', `${RBAC}/clusterrolebindings`, binding('carol-imp', 'ClusterRole', 'imp', [userSubject('carol')])),
  );
  const ssr = (token: string, headers: Record<string, string>) =>
    as(
      token,
      'POST',
      '/apis/authentication.plat.io/v1/selfsubjectreviews',
      { kind: 'SelfSubjectReview', apiVersion: 'authentication.plat.io/v1' },
      headers,
    );
  const ok = await ssr('carol-token', {
    'impersonate-user': 'alice',
    'impersonate-group': 'readers',
    'impersonate-extra-scopes': 'x',
  });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json.status.userInfo, {
    username: 'alice',
    groups: ['readers', 'system:authenticated'],
    extra: { scopes: ['x'] },
  });
  const user = await ssr('carol-token', { 'impersonate-user': 'dave' });
  assert.equal(
    user.json.message,
    'users "dave" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
  const group = await ssr('carol-token', { 'impersonate-user': 'alice', 'impersonate-group': 'system:masters' });
  assert.equal(
    group.json.message,
    'groups "system:masters" is forbidden: User "carol" cannot impersonate resource "groups" in API group "" at the cluster scope',
  );
  // admin (through edit) may impersonate the service accounts of its namespace only
  assert.equal(
    (await ssr('bob-token', { 'impersonate-user': 'system:serviceaccount:ns2:bot' })).json.status.userInfo.username,
    'system:serviceaccount:ns2:bot',
  );
  assert.equal(
    (await ssr('bob-token', { 'impersonate-user': 'system:serviceaccount:ns1:bot' })).json.message,
    'serviceaccounts "bot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"',
  );
  // the impersonated user is what the request is authorized as
  assert.equal(
    (await as('root-token', 'GET', '/api/v1/namespaces/ns2/pods', undefined, { 'impersonate-user': 'bob' })).status,
    200,
  );
  assert.equal(
    (await as('root-token', 'GET', '/api/v1/namespaces/ns1/secrets', undefined, { 'impersonate-user': 'bob' })).status,
    403,
  );
});

test('SubjectAccessReview, SelfSubjectAccessReview and LocalSubjectAccessReview answer from the chain', async () => {
  const sar = (spec: object) =>
    root('POST', `${AUTHZ}/subjectaccessreviews`, {
      apiVersion: 'authorization.plat.io/v1',
      kind: 'SubjectAccessReview',
      spec,
    });
  const yes = await sar({ user: 'bob', resourceAttributes: { namespace: 'ns2', verb: 'list', resource: 'pods' } });
  assert.equal(yes.status, 201);
  assert.equal(yes.json.kind, 'SubjectAccessReview');
  assert.deepEqual(yes.json.status, {
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "bob-admin/ns2" of ClusterRole "admin" to User "bob"',
  });
  assert.deepEqual(
    (await sar({ user: 'bob', resourceAttributes: { namespace: 'ns1', verb: 'list', resource: 'pods' } })).json.status,
    { allowed: false },
  );
  assert.deepEqual(
    (
      await sar({
        user: 'x',
        groups: ['dev'],
        resourceAttributes: { namespace: 'ns1', verb: 'create', resource: 'secrets' },
      })
    ).json.status.allowed,
    true,
  );
  assert.deepEqual(
    (await sar({ user: 'x', nonResourceAttributes: { path: '/healthz', verb: 'get' } })).json.status.allowed,
    false,
    'no groups are added to the subject',
  );
  const invalid = await sar({ resourceAttributes: { verb: 'get', resource: 'pods' } });
  assert.equal(invalid.status, 422);
  assert.equal(
    invalid.json.message,
    'SubjectAccessReview.authorization.plat.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
  );
  assert.equal(
    (
      await as('bob-token', 'POST', `${AUTHZ}/subjectaccessreviews`, {
        spec: { user: 'x', nonResourceAttributes: { path: '/', verb: 'get' } },
      })
    ).status,
    403,
  );
  const self = (spec: object) =>
    as('bob-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.plat.io/v1',
      metadata: { creationTimestamp: null },
      spec,
    });
  assert.equal(
    (await self({ resourceAttributes: { namespace: 'ns2', verb: 'create', group: G, resource: 'roles' } })).json.status
      .allowed,
    true,
  );
  assert.equal(
    (await self({ resourceAttributes: { namespace: 'ns2', verb: 'create', resource: 'resourcequotas' } })).json.status
      .allowed,
    false,
  );
  assert.equal((await self({ nonResourceAttributes: { path: '/apis/apps', verb: 'get' } })).json.status.allowed, true);
  const both = await self({ resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } });
  assert.equal(
    both.json.message,
    'SelfSubjectAccessReview.authorization.plat.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes',
  );
  const local = (ns: string, body: object) =>
    as('bob-token', 'POST', `${AUTHZ}/namespaces/${ns}/localsubjectaccessreviews`, {
      kind: 'LocalSubjectAccessReview',
      ...body,
    });
  const lok = await local('ns2', {
    spec: { user: 'carol', resourceAttributes: { namespace: 'ns2', verb: 'get', resource: 'pods' } },
  });
  assert.equal(lok.status, 201, lok.text);
  assert.equal(lok.json.metadata.namespace, 'ns2');
  assert.equal(lok.json.status.allowed, false);
  const mismatch = await local('ns2', {
    spec: { user: 'carol', resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'pods' } },
  });
  assert.equal(mismatch.status, 422);
  assert.match(
    mismatch.json.message,
    /spec.resourceAttributes.namespace: Invalid value: "ns1": must match metadata.namespace/,
  );
  const wrongMeta = await local('ns2', {
    metadata: { namespace: 'ns1' },
    spec: { user: 'carol', resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'pods' } },
  });
  assert.equal(wrongMeta.status, 400);
  assert.equal(
    wrongMeta.json.message,
    'the namespace of the provided object does not match the namespace sent on the request',
  );
  assert.equal(
    (
      await local('ns1', {
        spec: { user: 'carol', resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'pods' } },
      })
    ).status,
    403,
    'admin of ns2 only',
  );
});

test("SelfSubjectRulesReview: the caller's rules in a namespace", async () => {
  const review = (token: string, spec: object) =>
    as(token, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.plat.io/v1',
      spec,
    });
  const r = await review('carol-token', { namespace: 'ns1' });
  assert.equal(r.status, 201);
  assert.equal(r.json.status.incomplete, false);
  const rules = r.json.status.resourceRules;
  assert.ok(
    rules.some((x: any) => x.verbs.includes('create') && x.resources.includes('secrets') && x.apiGroups[0] === ''),
    'edit rules',
  );
  assert.ok(
    rules.some((x: any) => x.resources.includes('selfsubjectaccessreviews')),
    'basic-user rules',
  );
  assert.ok(
    r.json.status.nonResourceRules.some((x: any) => x.nonResourceURLs.includes('/apis/*') && x.verbs[0] === 'get'),
    'discovery rules',
  );
  assert.ok(
    !(await review('carol-token', { namespace: 'ns2' })).json.status.resourceRules.some((x: any) =>
      x.resources.includes('secrets'),
    ),
  );
  const masters = await review('root-token', { namespace: 'x' });
  assert.deepEqual(masters.json.status.resourceRules[0], { verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
  const none = await review('carol-token', {});
  assert.equal(none.status, 400);
  assert.equal(none.json.message, 'no namespace on request');
});

test('escalation prevention on create, update and patch; escalate and bind lift it', async () => {
  const path = `${RBAC}/namespaces/ns2/roles`;
  const nodes = { apiGroups: [''], resources: ['nodes'], verbs: ['get'] };
  // its own role to update (no other test's objects: it may run alone)
  await created(
    as('bob-token', 'POST', path, {
      metadata: { name: 'esc-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    }),
  );
  const refused = await as('bob-token', 'POST', path, { metadata: { name: 'r' }, rules: [nodes] });
  assert.equal(refused.status, 403);
  assert.deepEqual(refused.json.details, { name: 'r', group: G, kind: 'roles' });
  assert.equal(
    refused.json.message,
    `roles.${G} "r" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`,
  );
  const put = await as('bob-token', 'PUT', `${path}/esc-reader`, { metadata: { name: 'esc-reader' }, rules: [nodes] });
  assert.equal(put.status, 403, put.text);
  for (const [type, body] of [
    ['application/merge-patch+json', { rules: [nodes] }],
    ['application/json-patch+json', [{ op: 'add', path: '/rules/-', value: nodes }]],
  ] as const) {
    const patch = await as('bob-token', 'PATCH', `${path}/esc-reader`, JSON.stringify(body), { 'content-type': type });
    assert.equal(patch.status, 403, `${type}: ${patch.text}`);
    assert.match(
      patch.json.message,
      /not currently held:\n\{APIGroups:\[""\], Resources:\["nodes"\], Verbs:\["get"\]\}$/,
    );
  }
  const unchanged = await as('bob-token', 'GET', `${path}/esc-reader`);
  assert.deepEqual(
    unchanged.json.rules,
    [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    'refused patches left the role alone',
  );
  const ok = await as(
    'bob-token',
    'PATCH',
    `${path}/esc-reader`,
    JSON.stringify({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }),
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(ok.status, 200, ok.text);
  const rb = `${RBAC}/namespaces/ns2/rolebindings`;
  const bindAdmin = await as(
    'bob-token',
    'POST',
    rb,
    binding('x', 'ClusterRole', 'cluster-admin', [userSubject('carol')]),
  );
  assert.equal(bindAdmin.status, 403);
  assert.match(
    bindAdmin.json.message,
    new RegExp(`^rolebindings.${G} "x" is forbidden: user "bob" .* not currently held:\\n`),
  );
  await created(as('bob-token', 'POST', rb, binding('y', 'ClusterRole', 'view', [userSubject('carol')])));
  await created(
    root('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'powers' },
      rules: [
        { apiGroups: [G], resources: ['roles'], verbs: ['escalate'] },
        { apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin'] },
      ],
    }),
  );
  await created(
    root(
      'POST',
      `${RBAC}/namespaces/ns2/rolebindings`,
      binding('bob-powers', 'ClusterRole', 'powers', [userSubject('bob')]),
    ),
  );
  await created(as('bob-token', 'POST', path, { metadata: { name: 'r' }, rules: [nodes] }));
  await created(as('bob-token', 'POST', rb, binding('x', 'ClusterRole', 'cluster-admin', [userSubject('carol')])));
  assert.equal(
    (await as('carol-token', 'DELETE', '/api/v1/namespaces/ns2/configmaps/none')).status,
    404,
    'carol is now admin of ns2',
  );
  assert.equal(
    (
      await as(
        'bob-token',
        'POST',
        `${RBAC}/clusterrolebindings`,
        binding('z', 'ClusterRole', 'cluster-admin', [userSubject('bob')]),
      )
    ).status,
    403,
  );
});
