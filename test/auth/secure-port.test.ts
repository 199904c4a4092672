/**
 * The secure port served by uWS itself (no client CA): generated certificates, static tokens,
 * anonymous, 401s, the review kinds, TokenRequest and service account tokens, impersonation,
 * issuer discovery, and startup errors. Real TLS connections verified against the generated CA.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { decodeProtectedHeader } from 'jose';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from './helpers.js';
import { request as plainRequest } from '../helpers/server.js';
import { grant } from '../authz/helpers.js';

const ISS = 'https://issuer.test';
const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const TR = '/apis/authentication.plat.io/v1/tokenreviews';
const SSR_BODY = { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' };

let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
let args: string[];
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const get = (path: string, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, 'GET', path, undefined, headers);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, 'POST', path, body, headers);
const whoami = async (headers: Record<string, string> = {}) => {
  const r = await post(SSR, SSR_BODY, headers);
  assert.equal(r.status, 201, r.text);
  return r.json.status.userInfo;
};

before(async () => {
  pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a,"dev,ops"\nroot-token,root,uid-r,system:masters\n');
  args = [
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--service-account-signing-key-file',
    pki.key('sa', 'ec'),
    '--service-account-issuer',
    ISS,
  ];
  s = await startAuthServer(args);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  // the secure port authorizes (RBAC): grant what these authentication tests do
  await grant(
    s.url,
    'authn-tests',
    [
      { verbs: ['list'], apiGroups: [''], resources: ['namespaces'] },
      { verbs: ['create'], apiGroups: [''], resources: ['configmaps'] },
      { verbs: ['create'], apiGroups: ['authentication.plat.io'], resources: ['selfsubjectreviews'] },
      { verbs: ['get'], nonResourceURLs: ['/openid/*', '/.well-known/*'] },
    ],
    ['system:authenticated', 'system:unauthenticated'],
  );
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('TLS with the generated serving certificate; static token, anonymous and invalid token', async () => {
  assert.equal((await get('/api/v1/namespaces', bearer('alice-token'))).status, 200);
  assert.deepEqual(await whoami(bearer('alice-token')), {
    username: 'alice',
    uid: 'uid-a',
    groups: ['dev', 'ops', 'system:authenticated'],
  });
  assert.deepEqual(await whoami(), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  for (const path of ['/api/v1/namespaces', '/version', '/no/such/path']) {
    const bad = await get(path, bearer('wrong-secret-token'));
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    assert.doesNotMatch(bad.text, /wrong-secret-token/);
  }
  assert.equal(
    (await post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } }, bearer('wrong'))).status,
    401,
  );
});

test('the plain port keeps serving without authentication as system:unsecured', async () => {
  const r = await plainRequest(s.url, 'POST', SSR, SSR_BODY, { authorization: 'Bearer wrong' });
  assert.equal(r.status, 201);
  assert.deepEqual(r.json.status.userInfo, {
    username: 'system:unsecured',
    groups: ['system:masters', 'system:authenticated'],
  });
});

test('TokenReview: authenticated user with audiences, unknown token, foreign audiences, missing token', async () => {
  const ok = await post(
    TR,
    { kind: 'TokenReview', apiVersion: 'authentication.plat.io/v1', spec: { token: 'alice-token' } },
    bearer('root-token'),
  );
  assert.equal(ok.status, 201);
  assert.equal(ok.json.kind, 'TokenReview');
  assert.deepEqual(ok.json.status, {
    authenticated: true,
    user: { username: 'alice', uid: 'uid-a', groups: ['dev', 'ops', 'system:authenticated'] },
    audiences: [ISS],
  });
  const unknown = await post(TR, { spec: { token: 'nope' } }, bearer('root-token'));
  assert.equal(unknown.json.status.authenticated, false);
  assert.equal(unknown.json.status.error, 'invalid bearer token');
  const foreign = await post(TR, { spec: { token: 'alice-token', audiences: ['elsewhere'] } }, bearer('root-token'));
  assert.equal(foreign.json.status.authenticated, false);
  const missing = await post(TR, { spec: {} }, bearer('root-token'));
  assert.equal(missing.status, 400);
  assert.equal((await get(TR, bearer('root-token'))).status, 405);
});

test('TokenRequest issues a service account token that authenticates, also for a write whose body arrives during verification', async () => {
  assert.equal(
    (await plainRequest(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bot' } }))
      .status,
    201,
  );
  const before = Date.now();
  const tr = await post(
    '/api/v1/namespaces/default/serviceaccounts/bot/token',
    { kind: 'TokenRequest', apiVersion: 'authentication.plat.io/v1', spec: {} },
    bearer('root-token'),
  );
  assert.equal(tr.status, 201, tr.text);
  assert.equal(tr.json.kind, 'TokenRequest');
  assert.deepEqual(tr.json.spec, { audiences: [ISS], expirationSeconds: 3600, boundObjectRef: null });
  const exp = Date.parse(tr.json.status.expirationTimestamp);
  assert.ok(exp >= before + 3599_000 && exp <= Date.now() + 3601_000, tr.json.status.expirationTimestamp);
  const token: string = tr.json.status.token;
  // first use: the JWT is verified asynchronously while the body is already buffering
  const cm = await post(
    '/api/v1/namespaces/default/configmaps',
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-sa' }, data: { k: 'v'.repeat(50_000) } },
    bearer(token),
  );
  assert.equal(cm.status, 201, cm.text);
  assert.equal(cm.json.data.k.length, 50_000);
  const me = await whoami(bearer(token));
  assert.equal(me.username, 'system:serviceaccount:default:bot');
  assert.deepEqual(me.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
  const review = await post(TR, { spec: { token } }, bearer('root-token'));
  assert.equal(review.json.status.user.username, 'system:serviceaccount:default:bot');
  // the token names its key, which the JWKS publishes
  const jwks = await get('/openid/v1/jwks');
  assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
  assert.ok(jwks.json.keys.some((k: any) => k.kid === decodeProtectedHeader(token).kid));
  const cfg = await get('/.well-known/openid-configuration');
  assert.equal(cfg.json.issuer, ISS);
  assert.equal(cfg.json.jwks_uri, `${ISS}/openid/v1/jwks`);
});

test('TokenRequest validation, missing account, and revocation by deleting the account', async () => {
  const path = '/api/v1/namespaces/default/serviceaccounts/gone/token';
  assert.equal((await post(path, { spec: {} }, bearer('root-token'))).status, 404);
  assert.equal(
    (await plainRequest(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'gone' } }))
      .status,
    201,
  );
  const short = await post(path, { spec: { expirationSeconds: 60 } }, bearer('root-token'));
  assert.equal(short.status, 422);
  assert.match(short.json.message, /may not specify a duration less than 10 minutes/);
  const custom = await post(path, { spec: { audiences: ['api-x'], expirationSeconds: 600 } }, bearer('root-token'));
  assert.deepEqual(custom.json.spec.audiences, ['api-x']);
  assert.equal(
    (await get('/api/v1/namespaces', bearer(custom.json.status.token))).status,
    401,
    'not valid for the API audiences',
  );
  const tr = await post(path, { spec: {} }, bearer('root-token'));
  assert.equal((await plainRequest(s.url, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/gone')).status, 200);
  assert.equal((await get('/api/v1/namespaces', bearer(tr.json.status.token))).status, 401);
});

test('impersonation: a master may, others get the upstream 403', async () => {
  const me = await whoami({
    ...bearer('root-token'),
    'impersonate-user': 'bob',
    'impersonate-group': 'g1',
    'impersonate-uid': 'u-9',
    'impersonate-extra-scopes': 'read',
  });
  assert.deepEqual(me, {
    username: 'bob',
    uid: 'u-9',
    groups: ['g1', 'system:authenticated'],
    extra: { scopes: ['read'] },
  });
  const denied = await post(SSR, SSR_BODY, { ...bearer('alice-token'), 'impersonate-user': 'bob' });
  assert.equal(denied.status, 403);
  assert.equal(
    denied.json.message,
    'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
  assert.equal((await post(SSR, SSR_BODY, { 'impersonate-user': 'bob' })).status, 403, 'anonymous may not impersonate');
});

test('restart reuses the generated certificates; --anonymous-auth=false makes missing credentials 401', async () => {
  const ca = readFileSync(`${s.dataDir}/pki/ca.crt`, 'utf8');
  const cert = readFileSync(`${s.dataDir}/pki/apiserver.crt`, 'utf8');
  await s.stop();
  s = await startAuthServer([...args, '--anonymous-auth=false'], s.dataDir);
  assert.equal(readFileSync(`${s.dataDir}/pki/ca.crt`, 'utf8'), ca);
  assert.equal(readFileSync(`${s.dataDir}/pki/apiserver.crt`, 'utf8'), cert);
  assert.equal((await get('/api/v1/namespaces')).status, 401);
  assert.equal((await get('/api/v1/namespaces', bearer('alice-token'))).status, 200);
});

test('startup errors name the flag, file and line', async () => {
  writeFileSync(pki.path('bad.csv'), 'ok-token,ok,uid\nshort,row\n');
  const bad = await startupError(['--token-auth-file', pki.path('bad.csv')]);
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /--token-auth-file .*bad\.csv: line 2: must have at least 3 columns \(token, user name, user uid\), found 2/,
  );
  const noIssuer = await startupError(['--service-account-signing-key-file', pki.path('sa.key')]);
  assert.match(noIssuer.stderr, /--service-account-issuer is required with --service-account-signing-key-file/);
  const port = await startupError(['--secure-port', '70000']);
  assert.match(port.stderr, /--secure-port must be an integer between 0 and 65535 or off, got "70000"/);
});
