/**
 * The RBAC matrix over the real secure listener (`--authorization-mode Node,RBAC`): a few
 * identities × verbs × resources × subresources, each request really sent, and the decision
 * (403 or not) compared with an expected table built from upstream's default roles (`view`,
 * `edit` bound in one namespace, system:discovery, the Node authorizer). Writes are dry runs.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';

const RBAC = 'rbac.authorization.plat.io';
const TEAM = '/api/v1/namespaces/team';
const OTHER = '/api/v1/namespaces/other';
const APPS = '/apis/apps/v1/namespaces/team';
const DRY = '?dryRun=All';

type Who = 'anonymous' | 'nobody' | 'viewer' | 'editor' | 'node';
const WHO: Who[] = ['anonymous', 'nobody', 'viewer', 'editor', 'node'];
const TOKENS: Record<Who, string | undefined> = {
  anonymous: undefined,
  nobody: 'nobody-token',
  viewer: 'viewer-token',
  editor: 'editor-token',
  node: 'node-token',
};

let pki: Pki;
let s: AuthServer;
let tls: TlsClient;

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
const scale = {
  apiVersion: 'autoscaling/v1',
  kind: 'Scale',
  metadata: { name: 'web', namespace: 'team' },
  spec: { replicas: 2 },
};
const adminBinding = {
  apiVersion: `${RBAC}/v1`,
  kind: 'RoleBinding',
  metadata: { name: 'grab' },
  roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ kind: 'User', apiGroup: RBAC, name: 'editor' }],
};
const secretsRole = {
  apiVersion: `${RBAC}/v1`,
  kind: 'Role',
  metadata: { name: 'peek' },
  rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
};

/** [label, method, path, body, the identities allowed] */
const MATRIX: [string, string, string, unknown, Who[]][] = [
  ['discovery /api', 'GET', '/api', undefined, ['nobody', 'viewer', 'editor', 'node']],
  ['get configmap', 'GET', `${TEAM}/configmaps/cm`, undefined, ['viewer', 'editor']],
  ['list configmaps', 'GET', `${TEAM}/configmaps`, undefined, ['viewer', 'editor']],
  ['get configmap in another namespace', 'GET', `${OTHER}/configmaps/cm`, undefined, []],
  ['list configmaps across namespaces', 'GET', '/api/v1/configmaps', undefined, []],
  ['create configmap', 'POST', `${TEAM}/configmaps${DRY}`, cm('new'), ['editor']],
  ['update configmap', 'PUT', `${TEAM}/configmaps/cm${DRY}`, cm('cm'), ['editor']],
  ['delete configmap', 'DELETE', `${TEAM}/configmaps/cm${DRY}`, undefined, ['editor']],
  ['get secret', 'GET', `${TEAM}/secrets/s`, undefined, ['editor']],
  ['list secrets', 'GET', `${TEAM}/secrets`, undefined, ['editor']],
  ['get pods/log', 'GET', `${TEAM}/pods/p/log`, undefined, ['viewer', 'editor']],
  ['get pod status', 'GET', `${TEAM}/pods/p/status`, undefined, ['viewer', 'editor']],
  [
    'update pod status',
    'PUT',
    `${TEAM}/pods/p/status${DRY}`,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
    [],
  ],
  ['get deployments/scale', 'GET', `${APPS}/deployments/web/scale`, undefined, ['viewer', 'editor']],
  ['update deployments/scale', 'PUT', `${APPS}/deployments/web/scale${DRY}`, scale, ['editor']],
  [
    'create serviceaccounts/token',
    'POST',
    `${TEAM}/serviceaccounts/default/token`,
    { apiVersion: 'authentication.plat.io/v1', kind: 'TokenRequest', spec: {} },
    ['editor'],
  ],
  ['bind cluster-admin (escalation)', 'POST', `/apis/${RBAC}/v1/namespaces/team/rolebindings${DRY}`, adminBinding, []],
  ['create a role granting secrets', 'POST', `/apis/${RBAC}/v1/namespaces/team/roles${DRY}`, secretsRole, []],
  ['list namespaces', 'GET', '/api/v1/namespaces', undefined, []],
  ['get own node', 'GET', '/api/v1/nodes/n1', undefined, ['node']],
  ['get another node', 'GET', '/api/v1/nodes/n2', undefined, []],
  // AuthorizeNodeWithSelectors (on in 1.32): a node lists only itself
  ['list nodes', 'GET', '/api/v1/nodes', undefined, []],
  ['list own node by field selector', 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dn1', undefined, ['node']],
  ['get secret as node (unrelated)', 'GET', `${TEAM}/secrets/s`, undefined, ['editor']],
];

before(async () => {
  pki = new Pki();
  writeFileSync(
    pki.path('tokens.csv'),
    [
      'nobody-token,nobody,u1',
      'viewer-token,viewer,u2',
      'editor-token,editor,u3',
      'node-token,system:node:n1,u4,"system:nodes"',
      '',
    ].join('\n'),
  );
  s = await startAuthServer(['--token-auth-file', pki.path('tokens.csv'), '--authorization-mode', 'Node,RBAC']);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  const make = async (path: string, body: object) => {
    const r = await plain(s.url, 'POST', path, body);
    assert.equal(r.status, 201, `${path}: ${r.text}`);
  };
  for (const ns of ['team', 'other']) {
    await make('/api/v1/namespaces', { metadata: { name: ns } });
    await make(`/api/v1/namespaces/${ns}/configmaps`, cm('cm'));
  }
  await make(`${TEAM}/secrets`, { metadata: { name: 's' }, data: {} });
  for (const n of ['n1', 'n2']) await make('/api/v1/nodes', { metadata: { name: n } });
  await make(`${TEAM}/pods`, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
  await make(`${APPS}/deployments`, {
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  for (const [who, role] of [
    ['viewer', 'view'],
    ['editor', 'edit'],
  ]) {
    await make(`/apis/${RBAC}/v1/namespaces/team/rolebindings`, {
      metadata: { name: who },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'User', apiGroup: RBAC, name: who }],
    });
  }
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('every identity × request gets the decision of the table', async () => {
  const got: string[] = [];
  const want: string[] = [];
  for (const [label, method, path, body, allowed] of MATRIX) {
    for (const who of WHO) {
      const token = TOKENS[who];
      const r = await request(s.secureUrl, tls, method, path, body, token ? { authorization: `Bearer ${token}` } : {});
      assert.notEqual(r.status, 401, `${who} ${label}: authenticated`);
      got.push(`${label} / ${who}: ${r.status === 403 ? 'deny' : 'allow'}`);
      want.push(`${label} / ${who}: ${allowed.includes(who) ? 'allow' : 'deny'}`);
    }
  }
  assert.deepEqual(got, want);
});
