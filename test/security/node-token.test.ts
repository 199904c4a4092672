/**
 * Nodes minting unbound, long-lived tokens (issue 18, item 7), over the real secure listener
 * with `--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction`: a node's
 * TokenRequest must be bound to a pod (with its uid) scheduled on that node; every other shape
 * is upstream's admission 403 (pods that do not exist: 404). Other users are not restricted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const NS = '/api/v1/namespaces/work';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
const uids: Record<string, string> = {};

before(async () => {
  pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), 'n1-token,system:node:n1,uid-1,system:nodes\n');
  s = await startAuthServer([
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--authorization-mode',
    'Node,RBAC',
    '--enable-admission-plugins',
    'NodeRestriction',
    '--service-account-signing-key-file',
    pki.key('sa', 'ec'),
    '--service-account-issuer',
    'https://issuer.test',
  ]);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  const make = async (path: string, body: object) => {
    const r = await plain(s.url, 'POST', path, body);
    assert.equal(r.status, 201, `${path}: ${r.text}`);
    return r.json;
  };
  await make('/api/v1/namespaces', { metadata: { name: 'work' } });
  await make(`${NS}/serviceaccounts`, { metadata: { name: 'runner' } });
  for (const n of ['n1', 'n2']) {
    await make('/api/v1/nodes', { metadata: { name: n } });
    const pod = await make(`${NS}/pods`, {
      metadata: { name: `pod-${n}` },
      spec: { nodeName: n, serviceAccountName: 'runner', containers: [{ name: 'c', image: 'i' }] },
    });
    uids[n] = pod.metadata.uid;
  }
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

const tokenRequest = (spec: object) => ({
  apiVersion: 'authentication.plat.io/v1',
  kind: 'TokenRequest',
  spec: { audiences: [], ...spec },
});
const asNode = (spec: object) =>
  request(s.secureUrl, tls, 'POST', `${NS}/serviceaccounts/runner/token`, tokenRequest(spec), {
    authorization: 'Bearer n1-token',
  });
const podRef = (name: string, uid?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name,
  ...(uid === undefined ? {} : { uid }),
});

test('a node may not mint an unbound ten-year token', async () => {
  // the node authorizer lets n1 ask (a pod on n1 runs as runner), once the graph has the pod
  const r = await until(async () => {
    const got = await asNode({ expirationSeconds: 315360000 });
    return got.status === 403 && /node requested token/.test(got.json?.message ?? '') ? got : undefined;
  }, 'the admission refusal');
  assert.deepEqual(r.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'serviceaccounts "runner" is forbidden: node requested token not bound to a pod',
    reason: 'Forbidden',
    details: { name: 'runner', kind: 'serviceaccounts' },
    code: 403,
  });
});

test("a node's bound token: only for a pod of its own, named with the pod's uid", async () => {
  const refused: [object, number, string][] = [
    [
      { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'x', uid: 'u' } },
      403,
      'node requested token not bound to a pod',
    ],
    [{ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: '' } }, 403, 'node requested token not bound to a pod'],
    [{ boundObjectRef: podRef('pod-n1') }, 403, 'node requested token with a pod binding without a uid'],
    [
      { boundObjectRef: podRef('pod-n1', 'stale') },
      403,
      'the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated',
    ],
    [
      { boundObjectRef: podRef('pod-n2', uids.n2) },
      403,
      'node requested token bound to a pod scheduled on a different node',
    ],
    [{ boundObjectRef: podRef('missing', 'u') }, 404, 'pods "missing" not found'],
  ];
  for (const [spec, code, message] of refused) {
    const r = await asNode(spec);
    assert.equal(r.status, code, `${JSON.stringify(spec)}: ${r.text}`);
    assert.equal(r.json.message, code === 403 ? `serviceaccounts "runner" is forbidden: ${message}` : message);
  }
  const ok = await asNode({ boundObjectRef: podRef('pod-n1', uids.n1), expirationSeconds: 3600 });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.spec.boundObjectRef.name, 'pod-n1');
  assert.ok(ok.json.status.token);
});

test('users that are not nodes keep unbound tokens', async () => {
  const r = await plain(s.url, 'POST', `${NS}/serviceaccounts/runner/token`, tokenRequest({ expirationSeconds: 3600 }));
  assert.equal(r.status, 201, r.text);
});
