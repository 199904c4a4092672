/**
 * OIDC flags against a loopback HTTPS provider (discovery + JWKS fetched with --oidc-ca-file):
 * username claim and prefix rules, groups claim and prefix, required claims, audiences, expiry,
 * signing algorithms, key rotation, and startup errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from '../helpers.js';
import { TestIssuer } from './test-issuer.js';
import { oidcFlagsToJwt } from '../../../src/auth/jwt/oidc-flags.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
let pki: Pki;
let issuer: TestIssuer;
const servers: AuthServer[] = [];
let a: { s: AuthServer; tls: TlsClient };
let b: { s: AuthServer; tls: TlsClient };

async function serve(...args: string[]): Promise<{ s: AuthServer; tls: TlsClient }> {
  const s = await startAuthServer([
    '--oidc-issuer-url',
    issuer.base,
    '--oidc-client-id',
    'plat',
    '--oidc-ca-file',
    pki.path('idp-ca.crt'),
    ...args,
  ]);
  servers.push(s);
  return { s, tls: { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) } };
}
async function whoami(x: { s: AuthServer; tls: TlsClient }, token: string): Promise<{ status: number; user?: any }> {
  const r = await request(
    x.s.secureUrl,
    x.tls,
    'POST',
    SSR,
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
  return { status: r.status, user: r.json?.status?.userInfo };
}
/** The keys are fetched in the background at start (and on rotation): poll, bounded, for the wanted status. */
async function eventually(
  x: { s: AuthServer; tls: TlsClient },
  token: string,
  status: number,
): Promise<{ status: number; user?: any }> {
  const deadline = Date.now() + 10_000;
  let r = await whoami(x, token);
  for (let i = 0; i < 200 && r.status !== status && Date.now() < deadline; i++) {
    await new Promise((d) => setTimeout(d, 50));
    r = await whoami(x, token);
  }
  return r;
}

before(async () => {
  pki = new Pki().ca('idp-ca').server('idp-ca', 'idp');
  issuer = await new TestIssuer().start(pki, 'idp');
  await issuer.addKey('ec-1', 'ES256');
  await issuer.addKey('key-2');
  a = await serve(
    '--oidc-groups-claim',
    'groups',
    '--oidc-groups-prefix',
    'oidc:',
    '--oidc-required-claim',
    'hd=example.com,tier=gold',
  );
  b = await serve(
    '--oidc-username-claim',
    'email',
    '--oidc-signing-algs',
    'ES256,RS256',
    '--oidc-groups-claim',
    'groups',
  );
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of servers) s.cleanup();
  issuer?.close();
  pki?.cleanup();
});

const good = { sub: 'alice', hd: 'example.com', tier: 'gold', groups: ['dev', 'ops'] };

test('sub is prefixed with the issuer URL; groups are prefixed; keys come from discovery over HTTPS', async () => {
  const r = await eventually(a, await issuer.token(good), 201);
  assert.equal(r.status, 201);
  assert.deepEqual(r.user, {
    username: `${issuer.base}#alice`,
    groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'],
  });
  assert.ok((issuer.hits.get('/.well-known/openid-configuration') ?? 0) >= 1);
  // a single string is one group (upstream accepts string or array)
  assert.deepEqual((await whoami(a, await issuer.token({ ...good, groups: 'solo' }))).user.groups, [
    'oidc:solo',
    'system:authenticated',
  ]);
});

test('required claims, audience, expiry, issuer and algorithm are enforced (401)', async () => {
  const { hd: _hd, ...noHd } = good;
  const bad = [
    await issuer.token(noHd),
    await issuer.token({ ...good, tier: 'silver' }),
    await issuer.token(good, { aud: 'someone-else' }),
    await issuer.token(good, { expIn: -60 }),
    await issuer.token(good, { iss: 'https://other.example' }),
    await issuer.token(good, { kid: 'ec-1' }), // ES256: not in the default --oidc-signing-algs (RS256)
    (await issuer.token(good)).slice(0, -4) + 'AAAA', // bad signature
  ];
  for (const [i, t] of bad.entries()) {
    const r = await whoami(a, t);
    assert.equal(r.status, 401, `case ${i}`);
  }
  assert.equal(
    (await whoami(a, await issuer.token(good, { aud: ['x', 'plat'] }))).status,
    201,
    'any audience matching the client id',
  );
});

test('--oidc-username-claim email: no prefix, email_verified must not be false; --oidc-signing-algs', async () => {
  const claims = { sub: 'alice', email: 'alice@example.com' };
  const r = await eventually(b, await issuer.token({ ...claims, email_verified: true }, { kid: 'ec-1' }), 201);
  assert.equal(r.status, 201);
  assert.equal(r.user.username, 'alice@example.com');
  assert.equal(
    (await whoami(b, await issuer.token(claims))).user?.username,
    'alice@example.com',
    'no email_verified claim is fine',
  );
  assert.equal((await whoami(b, await issuer.token({ ...claims, email_verified: false }))).status, 401);
  assert.equal(
    (await whoami(b, await issuer.token({ sub: 'no-email' }))).status,
    401,
    'the username claim must be present',
  );
});

test('prefix rules of the flag table', () => {
  const f = {
    issuerURL: 'https://idp',
    clientID: 'c',
    usernameClaim: 'sub',
    usernamePrefix: '',
    groupsClaim: '',
    groupsPrefix: '',
    requiredClaims: {},
    caFile: '',
    signingAlgs: ['RS256'],
  };
  assert.deepEqual(oidcFlagsToJwt(f, undefined).claimMappings.username, { claim: 'sub', prefix: 'https://idp#' });
  assert.deepEqual(oidcFlagsToJwt({ ...f, usernameClaim: 'email' }, undefined).claimMappings.username, {
    claim: 'email',
    prefix: '',
  });
  assert.deepEqual(oidcFlagsToJwt({ ...f, usernamePrefix: '-' }, undefined).claimMappings.username, {
    claim: 'sub',
    prefix: '',
  });
  assert.deepEqual(
    oidcFlagsToJwt({ ...f, usernameClaim: 'email', usernamePrefix: 'mail:' }, undefined).claimMappings.username,
    { claim: 'email', prefix: 'mail:' },
  );
  assert.deepEqual(oidcFlagsToJwt({ ...f, usernamePrefix: 'u:' }, undefined).claimMappings.username, {
    claim: 'sub',
    prefix: 'u:',
  });
  assert.equal(oidcFlagsToJwt(f, undefined).claimMappings.groups, undefined);
});

test('key rotation: a token signed with a new key is accepted once the JWKS is fetched again', async () => {
  const before = issuer.hits.get('/jwks') ?? 0;
  await issuer.rotate('key-3');
  const t = await issuer.token(good);
  const r = await eventually(a, t, 201);
  assert.equal(r.status, 201);
  assert.ok((issuer.hits.get('/jwks') ?? 0) > before);
});

test('startup errors', async () => {
  assert.match(
    (await startupError(['--oidc-issuer-url', 'https://idp'])).stderr,
    /oidc-issuer-url and oidc-client-id must be specified together/,
  );
  assert.match(
    (await startupError(['--oidc-issuer-url', 'http://idp', '--oidc-client-id', 'c'])).stderr,
    /oidc-issuer-url \(http:\/\/idp\) must use https scheme/,
  );
  assert.match(
    (await startupError(['--oidc-signing-algs', 'HS256'])).stderr,
    /--oidc-signing-algs: unsupported signing algorithm "HS256"/,
  );
  assert.match(
    (await startupError(['--oidc-required-claim', 'novalue'])).stderr,
    /--oidc-required-claim must be formatted as key=value/,
  );
  assert.match(
    (
      await startupError([
        '--oidc-issuer-url',
        'https://idp',
        '--oidc-client-id',
        'c',
        '--authentication-config',
        '/nope',
      ])
    ).stderr,
    /authentication-config file and oidc-\* flags are mutually exclusive/,
  );
});
