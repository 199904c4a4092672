/**
 * Authorization in the real server: the secure port authorizes with RBAC by default (upstream
 * 403s, 401 unchanged), the plain port does not, the default policy is bootstrapped and
 * reconciled, the RBAC index is loaded from storage at start, and the other modes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

const RBAC = '/apis/rbac.authorization.plat.io/v1';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
let tokenArgs: string[];
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const as = (token: string | undefined, method: string, path: string, body?: unknown) =>
  request(s.secureUrl, tls, method, path, body, token ? bearer(token) : {});

before(async () => {
  pki = new Pki();
  writeFileSync(
    pki.path('tokens.csv'),
    'bob-token,bob,uid-b\nroot-token,root,uid-r,system:masters\nmon-token,mon,uid-m,system:monitoring\n',
  );
  tokenArgs = ['--token-auth-file', pki.path('tokens.csv')];
  s = await startAuthServer(tokenArgs);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

const status = (message: string, details: object) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason: 'Forbidden',
  details,
  code: 403,
});

test('RBAC by default on the secure port: upstream 403s for resources, collections, cluster scope and paths; 401 unchanged', async () => {
  const named = await as('bob-token', 'GET', '/api/v1/namespaces/default/configmaps/x');
  assert.equal(named.status, 403);
  assert.deepEqual(
    named.json,
    status(
      'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"',
      { name: 'x', kind: 'configmaps' },
    ),
  );
  assert.deepEqual(
    (await as('bob-token', 'GET', '/api/v1/namespaces')).json,
    status(
      'namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope',
      { kind: 'namespaces' },
    ),
  );
  assert.deepEqual(
    (await as('bob-token', 'GET', '/apis/apps/v1/namespaces/ns/deployments?watch=true')).json,
    status(
      'deployments.apps is forbidden: User "bob" cannot watch resource "deployments" in API group "apps" in the namespace "ns"',
      { group: 'apps', kind: 'deployments' },
    ),
  );
  const write = await as('bob-token', 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'c' },
    data: { k: 'v'.repeat(20_000) },
  });
  assert.equal(write.status, 403, 'a refused write with a body still gets its 403');
  assert.equal(
    write.json.message,
    'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default"',
  );
  assert.deepEqual(
    (await as(undefined, 'GET', '/metrics')).json,
    status('forbidden: User "system:anonymous" cannot get path "/metrics"', {}),
  );
  assert.equal((await as('bad-token', 'GET', '/api/v1/namespaces')).status, 401);
  assert.equal((await as('bad-token', 'GET', '/healthz')).status, 401);
});

test('the default bindings: health and version for anyone, discovery and self reviews for authenticated users, /metrics for system:monitoring, all for system:masters', async () => {
  for (const path of ['/healthz', '/livez', '/readyz', '/version'])
    assert.equal((await as(undefined, 'GET', path)).status, 200, path);
  assert.equal((await as(undefined, 'GET', '/api')).status, 403);
  for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/openapi/v2'])
    assert.equal((await as('bob-token', 'GET', path)).status, 200, path);
  const ssr = await as('bob-token', 'POST', '/apis/authentication.plat.io/v1/selfsubjectreviews', {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.plat.io/v1',
  });
  assert.equal(ssr.status, 201);
  assert.equal((await as('bob-token', 'GET', '/metrics')).status, 403);
  assert.notEqual((await as('mon-token', 'GET', '/metrics')).status, 403);
  assert.equal((await as('root-token', 'GET', '/api/v1/namespaces')).status, 200);
  assert.equal((await as('root-token', 'DELETE', '/api/v1/namespaces/default/configmaps/none')).status, 404);
});

test('the plain port still skips authorization', async () => {
  assert.equal((await plain(s.url, 'GET', '/api/v1/namespaces')).status, 200);
  assert.equal((await plain(s.url, 'GET', '/metrics')).status !== 403, true);
});

test('bootstrap policy: default ClusterRoles and ClusterRoleBindings with the bootstrapping label and autoupdate annotation', async () => {
  const roles = (
    await plain(s.url, 'GET', `${RBAC}/clusterroles?labelSelector=platform.io%2Fbootstrapping%3Drbac-defaults`)
  ).json.items;
  const names = roles.map((r: any) => r.metadata.name);
  for (const n of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:discovery',
    'system:basic-user',
    'system:public-info-viewer',
    'system:monitoring',
  ]) {
    assert.ok(names.includes(n), n);
  }
  const view = roles.find((r: any) => r.metadata.name === 'view');
  assert.equal(view.metadata.annotations['rbac.authorization.platform.io/autoupdate'], 'true');
  assert.equal(view.metadata.labels['rbac.authorization.plat.io/aggregate-to-edit'], 'true');
  assert.deepEqual(view.aggregationRule, {
    clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.plat.io/aggregate-to-view': 'true' } }],
  });
  const admin = (await plain(s.url, 'GET', `${RBAC}/clusterrolebindings/cluster-admin`)).json;
  assert.deepEqual(admin.subjects, [{ apiGroup: 'rbac.authorization.plat.io', kind: 'Group', name: 'system:masters' }]);
  assert.deepEqual(admin.roleRef, {
    apiGroup: 'rbac.authorization.plat.io',
    kind: 'ClusterRole',
    name: 'cluster-admin',
  });
  const piv = (await plain(s.url, 'GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)).json;
  assert.deepEqual(
    piv.subjects.map((x: any) => x.name),
    ['system:authenticated', 'system:unauthenticated'],
  );
  for (const b of ['system:discovery', 'system:basic-user']) {
    assert.deepEqual(
      (await plain(s.url, 'GET', `${RBAC}/clusterrolebindings/${b}`)).json.subjects.map((x: any) => x.name),
      ['system:authenticated'],
    );
  }
});

test('aggregation controller: admin, edit and view hold the gathered rules; a new labelled ClusterRole is added to them', async () => {
  const rules = async (name: string) => (await plain(s.url, 'GET', `${RBAC}/clusterroles/${name}`)).json.rules ?? [];
  const has = (list: any[], resource: string, verb: string) =>
    list.some((r) => r.resources?.includes(resource) && r.verbs.includes(verb));
  assert.ok(has(await rules('view'), 'pods', 'list'));
  assert.ok(!has(await rules('view'), 'secrets', 'get'));
  assert.ok(
    has(await rules('edit'), 'pods', 'list') && has(await rules('edit'), 'secrets', 'create'),
    'edit gathers view',
  );
  assert.ok(
    has(await rules('admin'), 'roles', 'create') && has(await rules('admin'), 'secrets', 'create'),
    'admin gathers edit',
  );
  const label = { 'rbac.authorization.plat.io/aggregate-to-view': 'true' };
  const made = await plain(s.url, 'POST', `${RBAC}/clusterroles`, {
    metadata: { name: 'widgets-view', labels: label },
    rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }],
  });
  assert.equal(made.status, 201);
  const w = await openWatch(
    s.url,
    `${RBAC}/clusterroles?watch=1&resourceVersion=${made.json.metadata.resourceVersion}`,
  );
  try {
    const gathered = (name: string) => (evs: { type: string; object: any }[]) =>
      evs.some((e) => e.object.metadata.name === name && has(e.object.rules ?? [], 'widgets', 'get'));
    await w.waitFor(gathered('view'), 'view gathers widgets-view');
    await w.waitFor(gathered('admin'), 'and so does admin, through edit');
  } finally {
    w.close();
  }
});

test('restart: the index is loaded from storage; missing defaults come back, changed ones are reconciled unless autoupdate is "false"', async () => {
  await plain(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'keep' } });
  const rb = {
    metadata: { name: 'b' },
    roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.plat.io', name: 'bob' }],
  };
  assert.equal((await plain(s.url, 'POST', `${RBAC}/namespaces/keep/rolebindings`, rb)).status, 201);
  assert.equal((await plain(s.url, 'DELETE', `${RBAC}/clusterroles/system:discovery`)).status, 200);
  const basic = (await plain(s.url, 'GET', `${RBAC}/clusterroles/system:basic-user`)).json;
  assert.equal(
    (await plain(s.url, 'PUT', `${RBAC}/clusterroles/system:basic-user`, { ...basic, rules: basic.rules.slice(1) }))
      .status,
    200,
  );
  const mon = (await plain(s.url, 'GET', `${RBAC}/clusterroles/system:monitoring`)).json;
  mon.metadata.annotations['rbac.authorization.platform.io/autoupdate'] = 'false';
  assert.equal(
    (await plain(s.url, 'PUT', `${RBAC}/clusterroles/system:monitoring`, { ...mon, rules: [] })).status,
    200,
  );
  await s.stop();
  s = await startAuthServer(tokenArgs, s.dataDir);
  assert.equal(
    (await as('bob-token', 'GET', '/api/v1/namespaces/keep/pods')).status,
    200,
    'the binding made before the restart grants at once',
  );
  assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/default/pods')).status, 403);
  assert.equal((await plain(s.url, 'GET', `${RBAC}/clusterroles/system:discovery`)).status, 200, 'recreated');
  assert.deepEqual(
    (await plain(s.url, 'GET', `${RBAC}/clusterroles/system:basic-user`)).json.rules,
    [
      basic.rules[1],
      { verbs: ['create'], apiGroups: ['authorization.plat.io'], resources: ['selfsubjectaccessreviews'] },
      { verbs: ['create'], apiGroups: ['authorization.plat.io'], resources: ['selfsubjectrulesreviews'] },
    ],
    'the missing permissions are added back, one rule each (upstream reconciliation)',
  );
  assert.equal(
    (await plain(s.url, 'GET', `${RBAC}/clusterroles/system:monitoring`)).json.rules,
    undefined,
    'autoupdate "false" is left alone',
  );
});

test('--authorization-mode: AlwaysDeny refuses everyone but system:masters, AlwaysAllow allows all; bad values stop the server', async () => {
  const deny = await startAuthServer([...tokenArgs, '--authorization-mode', 'AlwaysDeny']);
  try {
    const ca = { ca: readFileSync(`${deny.dataDir}/pki/ca.crt`) };
    const r = await request(deny.secureUrl, ca, 'GET', '/healthz', undefined, bearer('bob-token'));
    assert.deepEqual(r.json, status('forbidden: User "bob" cannot get path "/healthz": Everything is forbidden.', {}));
    assert.equal(
      (await request(deny.secureUrl, ca, 'GET', '/api/v1/namespaces', undefined, bearer('root-token'))).status,
      200,
    );
  } finally {
    await deny.stop();
    deny.cleanup();
  }
  const allow = await startAuthServer([...tokenArgs, '--authorization-mode', 'AlwaysAllow']);
  try {
    const ca = { ca: readFileSync(`${allow.dataDir}/pki/ca.crt`) };
    assert.equal(
      (await request(allow.secureUrl, ca, 'GET', '/api/v1/namespaces', undefined, bearer('bob-token'))).status,
      200,
    );
    assert.equal((await request(allow.secureUrl, ca, 'GET', '/metrics')).status !== 403, true);
  } finally {
    await allow.stop();
    allow.cleanup();
  }
  const bad = await startupError(['--authorization-mode', 'RBAC,Nope']);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--authorization-mode must be a comma-separated list of AlwaysAllow, AlwaysDeny, ABAC, Node, RBAC, Webhook, got "RBAC,Nope"/,
  );
});
