/**
 * The command-line flags no other test passed (issue 25 item 5), each asserted by its effect over
 * the real secure listener of one server: --bind-address, --cert-dir, --api-audiences,
 * --audit-log-format, --enable-aggregator-routing, --oidc-username-prefix,
 * --service-account-jwks-uri, --service-account-key-file and --service-account-lookup=false (plus
 * their refused values). The last test passes the flags whose effect is tested on their backend
 * directly (test/audit/log.test.ts rotates with AuditLog's options) through the parser.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { TestIssuer } from '../auth/jwt/test-issuer.js';
import { request as plainRequest } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { keyId } from '../../src/auth/sa-keys.js';
import { parseArgs } from '../../src/server/options.js';

const ISS = 'https://issuer.flags.test';
const JWKS_URI = 'https://keys.flags.test/openid/v1/jwks';
const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const TR = '/apis/authentication.plat.io/v1/tokenreviews';
const ROOT = { authorization: 'Bearer root-token' };

let pki: Pki;
let idp: Pki;
let issuer: TestIssuer;
let s: AuthServer;
let base: string;
let tls: TlsClient;
let certDir: string;
let auditLog: string;
const ext = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

before(async () => {
  pki = new Pki();
  idp = new Pki().ca('idp-ca').server('idp-ca', 'idp');
  issuer = await new TestIssuer().start(idp, 'idp');
  await issuer.addKey('k1');
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a,dev\nroot-token,root,uid-r,system:masters\n');
  writeFileSync(pki.path('ext-sa.pub'), ext.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(pki.path('policy.yaml'), 'apiVersion: audit.plat.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  certDir = pki.path('certs');
  auditLog = pki.path('audit.log');
  s = await startAuthServer([
    '--bind-address',
    '::1',
    '--cert-dir',
    certDir,
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--service-account-issuer',
    ISS,
    '--service-account-signing-key-file',
    pki.key('sa', 'ec'),
    '--service-account-key-file',
    pki.path('ext-sa.pub'),
    '--service-account-jwks-uri',
    JWKS_URI,
    '--api-audiences',
    'aud-a,aud-b',
    '--service-account-lookup=false',
    '--oidc-issuer-url',
    issuer.base,
    '--oidc-client-id',
    'plat',
    '--oidc-ca-file',
    idp.path('idp-ca.crt'),
    '--oidc-username-prefix',
    'oidc:',
    '--audit-policy-file',
    pki.path('policy.yaml'),
    '--audit-log-path',
    auditLog,
    '--audit-log-format',
    'json',
    '--enable-aggregator-routing',
    'true',
  ]);
  base = `https://[::1]:${s.securePort}`;
  tls = { ca: readFileSync(join(certDir, 'ca.crt')) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  issuer?.close();
  idp?.cleanup();
  pki?.cleanup();
});

const whoami = (token: string) =>
  request(
    base,
    tls,
    'POST',
    SSR,
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );

/** Resolves with the connection error code of a TCP connect (undefined when it connected). */
function connectError(host: string, port: number): Promise<string | undefined> {
  return new Promise((done) => {
    const sock = connect({ host, port });
    sock.once('connect', () => {
      sock.destroy();
      done(undefined);
    });
    sock.once('error', (e: NodeJS.ErrnoException) => done(e.code));
  });
}

test('--bind-address ::1: the secure port listens on the IPv6 loopback only, and the admin kubeconfig names it', async () => {
  const r = await request(base, tls, 'GET', '/version', undefined, ROOT);
  assert.equal(r.status, 200, r.text);
  assert.equal(await connectError('127.0.0.1', s.securePort), 'ECONNREFUSED');
  const kubeconfig = readFileSync(join(s.dataDir, 'admin.kubeconfig'), 'utf8');
  assert.match(kubeconfig, new RegExp(`server: https://\\[::1\\]:${s.securePort}\\n`));
});

test('--cert-dir: the CA, serving and admin certificates are generated there and the port serves that chain', async () => {
  for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt'])
    assert.ok(existsSync(join(certDir, f)), `${f} in --cert-dir`);
  assert.equal(existsSync(join(s.dataDir, 'pki', 'ca.crt')), false, 'nothing generated under <data-dir>/pki');
  // verified against the CA of --cert-dir (request() rejects an unverified chain)
  assert.equal((await request(base, tls, 'GET', '/version')).status, 200);
  const other = new Pki().ca('other');
  try {
    await assert.rejects(
      request(base, { ca: other.read('other.crt') }, 'GET', '/version'),
      /self-signed|unable to verify|certificate/,
    );
  } finally {
    other.cleanup();
  }
});

test('--api-audiences: the default audiences of a TokenRequest, and what a TokenReview accepts', async () => {
  assert.equal(
    (await plainRequest(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bot' } }))
      .status,
    201,
  );
  const tr = await request(
    base,
    tls,
    'POST',
    '/api/v1/namespaces/default/serviceaccounts/bot/token',
    { kind: 'TokenRequest', apiVersion: 'authentication.plat.io/v1', spec: {} },
    ROOT,
  );
  assert.equal(tr.status, 201, tr.text);
  assert.deepEqual(tr.json.spec.audiences, ['aud-a', 'aud-b']);
  assert.deepEqual(decodeJwt(tr.json.status.token).aud, ['aud-a', 'aud-b']);
  assert.equal((await whoami(tr.json.status.token)).status, 201);
  // a token for another audience does not authenticate against the API (401)
  const foreign = await request(
    base,
    tls,
    'POST',
    '/api/v1/namespaces/default/serviceaccounts/bot/token',
    { kind: 'TokenRequest', apiVersion: 'authentication.plat.io/v1', spec: { audiences: ['elsewhere'] } },
    ROOT,
  );
  assert.equal(foreign.status, 201, foreign.text);
  assert.equal((await whoami(foreign.json.status.token)).status, 401);
  // a static token is valid for the API audiences only: the review answers the intersection
  const some = await request(
    base,
    tls,
    'POST',
    TR,
    { spec: { token: 'alice-token', audiences: ['aud-b', 'other'] } },
    ROOT,
  );
  assert.deepEqual([some.json.status.authenticated, some.json.status.audiences], [true, ['aud-b']]);
  const none = await request(base, tls, 'POST', TR, { spec: { token: 'alice-token', audiences: ['other'] } }, ROOT);
  assert.notEqual(none.json.status.authenticated, true);
});

test('--audit-log-format json: each audit line is one JSON Event; another format is refused at start', async () => {
  assert.equal((await request(base, tls, 'GET', '/api/v1/namespaces/default', undefined, ROOT)).status, 200);
  const event = await until(async () => {
    const lines = existsSync(auditLog) ? readFileSync(auditLog, 'utf8').split('\n').filter(Boolean) : [];
    const events = lines.map((l) => JSON.parse(l) as { kind: string; requestURI: string; user: { username: string } });
    return events.find((e) => e.requestURI === '/api/v1/namespaces/default' && e.user.username === 'root');
  }, 'the audit event of the GET');
  assert.equal(event.kind, 'Event');
  const r = await startupError(['--audit-log-format', 'legacy']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--audit-log-format must be json, got "legacy"/);
});

test('--enable-aggregator-routing: true and false are accepted (this server runs with true), anything else is refused', async () => {
  assert.equal(
    (await request(base, tls, 'GET', '/apis/apiregistration.plat.io/v1/apiservices', undefined, ROOT)).status,
    200,
  );
  const r = await startupError(['--enable-aggregator-routing', 'yes']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--enable-aggregator-routing must be true or false, got "yes"/);
});

test('--oidc-username-prefix oidc: an OIDC user is named oidc:<sub> instead of <issuer>#<sub>', async () => {
  const token = await issuer.token({ sub: 'alice' });
  // the provider's keys are fetched in the background at start: poll for the first 201
  const r = await until(async () => {
    const x = await whoami(token);
    return x.status === 201 ? x : undefined;
  }, 'the OIDC keys');
  assert.equal(r.json.status.userInfo.username, 'oidc:alice');
});

test('--service-account-jwks-uri: the issuer discovery document announces it', async () => {
  const r = await request(base, tls, 'GET', '/.well-known/openid-configuration', undefined, ROOT);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.issuer, ISS);
  assert.equal(r.json.jwks_uri, JWKS_URI);
});

test('--service-account-key-file: a token signed by that key authenticates, and the key is published', async () => {
  const sa = await plainRequest(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
    metadata: { name: 'ext' },
  });
  assert.equal(sa.status, 201);
  const kid = keyId(ext.publicKey);
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    'platform.io': { namespace: 'default', serviceaccount: { name: 'ext', uid: sa.json.metadata.uid } },
  })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISS)
    .setSubject('system:serviceaccount:default:ext')
    .setAudience(['aud-a'])
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 600)
    .sign(ext.privateKey);
  const r = await whoami(token);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status.userInfo.username, 'system:serviceaccount:default:ext');
  const jwks = await request(base, tls, 'GET', '/openid/v1/jwks', undefined, ROOT);
  assert.ok(
    jwks.json.keys.some((k: { kid: string }) => k.kid === kid),
    jwks.text,
  );
  // the same claims signed by a key in no file: 401
  const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const forged = await new SignJWT({
    'platform.io': { namespace: 'default', serviceaccount: { name: 'ext', uid: sa.json.metadata.uid } },
  })
    .setProtectedHeader({ alg: 'ES256', kid: keyId(stranger.publicKey) })
    .setIssuer(ISS)
    .setSubject('system:serviceaccount:default:ext')
    .setAudience(['aud-a'])
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(stranger.privateKey);
  assert.equal((await whoami(forged)).status, 401);
});

test('--service-account-lookup=false: a token naming an account that was never stored still authenticates', async () => {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    'platform.io': { namespace: 'default', serviceaccount: { name: 'ghost', uid: 'no-such-uid' } },
  })
    .setProtectedHeader({ alg: 'ES256', kid: keyId(ext.publicKey) })
    .setIssuer(ISS)
    .setSubject('system:serviceaccount:default:ghost')
    .setAudience(['aud-b'])
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(ext.privateKey);
  assert.equal((await plainRequest(s.url, 'GET', '/api/v1/namespaces/default/serviceaccounts/ghost')).status, 404);
  const r = await whoami(token);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status.userInfo.username, 'system:serviceaccount:default:ghost');
});

test('--audit-log-maxsize, --audit-log-maxbackup, --audit-log-maxage and --kubelet-client-key parse into the options their backends take', () => {
  const o = parseArgs([
    '--audit-log-maxsize',
    '10',
    '--audit-log-maxbackup=3',
    '--audit-log-maxage',
    '7',
    '--kubelet-client-certificate',
    '/k/client.crt',
    '--kubelet-client-key',
    '/k/client.key',
  ]);
  assert.deepEqual([o.auditLogMaxSizeMB, o.auditLogMaxBackups, o.auditLogMaxAgeDays], [10, 3, 7]);
  assert.deepEqual([o.kubeletClientCertificate, o.kubeletClientKey], ['/k/client.crt', '/k/client.key']);
  assert.throws(() => parseArgs(['--audit-log-maxsize', '-1']), /--audit-log-maxsize/);
  assert.throws(
    () => parseArgs(['--kubelet-client-key', '/k/client.key']),
    /--kubelet-client-certificate and --kubelet-client-key must be given together/,
  );
});
