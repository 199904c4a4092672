/**
 * Bound service account tokens (TokenRequest spec.boundObjectRef, Pod or Secret): upstream's
 * checks when issuing, the pod claims in the user's extra, and revocation by deleting the
 * bound object (--service-account-lookup, on by default).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from './helpers.js';
import { request as plainRequest } from '../helpers/server.js';
import { ServiceAccountTokens, type StoredObject } from '../../src/auth/service-account.js';
import { keyId, parsePublicKeys } from '../../src/auth/sa-keys.js';

const ISS = 'https://issuer.test';
const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
const uids: Record<string, string> = {};

const tokenRequest = (ref: object | undefined) =>
  plainRequest(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts/bot/token', {
    apiVersion: 'authentication.plat.io/v1',
    kind: 'TokenRequest',
    spec: { boundObjectRef: ref },
  });
const whoami = async (token: string) => {
  const r = await request(
    s.secureUrl,
    tls,
    'POST',
    SSR,
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
  return { status: r.status, user: r.json?.status?.userInfo };
};
const pod = (name: string, sa: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { serviceAccountName: sa, containers: [{ name: 'c', image: 'busybox' }] },
});

before(async () => {
  pki = new Pki();
  s = await startAuthServer([
    '--service-account-signing-key-file',
    pki.key('sa', 'ec'),
    '--service-account-issuer',
    ISS,
  ]);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  for (const [path, body] of [
    ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bot' } }],
    // the ServiceAccount admission plugin refuses pods of accounts that do not exist
    ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'other' } }],
    ['/api/v1/namespaces/default/pods', pod('p1', 'bot')],
    ['/api/v1/namespaces/default/pods', pod('p2', 'other')],
    ['/api/v1/namespaces/default/secrets', { metadata: { name: 's1' } }],
  ] as const) {
    const r = await plainRequest(s.url, 'POST', path, body);
    assert.equal(r.status, 201, r.text);
    uids[r.json.metadata.name] = r.json.metadata.uid;
  }
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('a pod-bound token: the uid is filled in, the pod is in the user extra', async () => {
  const r = await tokenRequest({ apiVersion: 'v1', kind: 'Pod', name: 'p1' });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.spec.boundObjectRef, { apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: uids.p1 });
  const me = await whoami(r.json.status.token);
  assert.equal(me.status, 201);
  assert.equal(me.user.username, 'system:serviceaccount:default:bot');
  assert.deepEqual(me.user.extra['authentication.platform.io/pod-name'], ['p1']);
  assert.deepEqual(me.user.extra['authentication.platform.io/pod-uid'], [uids.p1]);
  assert.match(me.user.extra['authentication.platform.io/credential-id'][0], /^JTI=/);
});

test("upstream refusals: another account's pod, a stale uid, an unsupported kind, a missing object", async () => {
  const other = await tokenRequest({ apiVersion: 'v1', kind: 'Pod', name: 'p2' });
  assert.equal(other.status, 400);
  assert.equal(
    other.json.message,
    'cannot bind token for serviceaccount "bot" to pod running with different serviceaccount name.',
  );
  const stale = await tokenRequest({ apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: 'not-the-uid' });
  assert.equal(stale.status, 409);
  assert.equal(stale.json.reason, 'Conflict');
  assert.match(
    stale.json.message,
    /^Operation cannot be fulfilled on Pod "p1": the UID in the bound object reference \(not-the-uid\) does not match the UID in record/,
  );
  const cm = await tokenRequest({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' });
  assert.equal(cm.status, 400);
  assert.equal(cm.json.message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
  const missing = await tokenRequest({ apiVersion: 'v1', kind: 'Secret', name: 'nope' });
  assert.equal(missing.status, 404);
  assert.equal(missing.json.message, 'secrets "nope" not found');
});

test('deleting the bound secret revokes its token', async () => {
  const r = await tokenRequest({ apiVersion: 'v1', kind: 'Secret', name: 's1' });
  assert.equal(r.status, 201, r.text);
  // first use after the delete: no cached answer can hide the revocation
  assert.equal((await plainRequest(s.url, 'DELETE', '/api/v1/namespaces/default/secrets/s1')).status, 200);
  assert.equal((await whoami(r.json.status.token)).status, 401);
});

test('unit: a cached bound token is revoked within the cache TTL; uid and deletion timestamp checked', async () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const clock = { t: 1_700_000_000_000 };
  const store = new Map<string, StoredObject>([
    ['serviceaccounts/bot', { uid: 'sa-1' }],
    ['pods/p', { uid: 'pod-1' }],
  ]);
  const sa = new ServiceAccountTokens({
    issuers: [ISS],
    signingKey: { kid: keyId(ec.publicKey), alg: 'ES256', key: ec.privateKey },
    domain: 'plat.io',
    apiAudiences: [ISS],
    verifyKeys: parsePublicKeys(ec.publicKey.export({ type: 'spki', format: 'pem' }) as string, 'k'),
    now: () => clock.t,
    lookup: async (resource, _ns, name) => store.get(`${resource}/${name}`),
  });
  const auth = sa.authenticator();
  const { token } = await sa.issue(
    { namespace: 'ns', name: 'bot', uid: 'sa-1', bound: { kind: 'Pod', name: 'p', uid: 'pod-1' } },
    [ISS],
    3600,
  );
  assert.equal((await auth.authenticateToken(token, [ISS])).kind, 'user');
  store.set('pods/p', { uid: 'pod-1', deletionTimestamp: new Date(clock.t - 1000).toISOString() });
  assert.equal((await auth.authenticateToken(token, [ISS])).kind, 'user', 'answered from the 10 s cache');
  clock.t += 10_001;
  assert.match(((await auth.authenticateToken(token, [ISS])) as any).reason, /pods ns\/p is being deleted/);
  store.set('pods/p', { uid: 'pod-2' });
  assert.match(
    ((await auth.authenticateToken(token, [ISS])) as any).reason,
    /UID \(pod-2\) does not match claim \(pod-1\)/,
  );
  store.delete('pods/p');
  assert.match(((await auth.authenticateToken(token, [ISS])) as any).reason, /pods ns\/p has been deleted/);
});
