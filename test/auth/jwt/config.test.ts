/**
 * AuthenticationConfiguration (`--authentication-config`): JWT authenticators against a loopback
 * HTTPS provider (CA in the file, discoveryURL override), CEL claim validation, claim mappings
 * and user validation, anonymous conditions, reload on change keeping the last good file, and
 * validation errors naming the field.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from '../helpers.js';
import { TestIssuer } from './test-issuer.js';
import { parseAuthenticationConfig } from '../../../src/auth/jwt/config.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const GROUP = 'apiserver.config.plat.io';
let pki: Pki;
let issuer: TestIssuer;
let s: AuthServer;
let tls: TlsClient;
let stderr = '';

const indent = (text: string, n: number) =>
  text
    .trim()
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

function config(usernameExpression = '"oidc:" + claims.sub'): string {
  const ca = `    certificateAuthority: |\n${indent(pki.read('idp-ca.crt').toString(), 6)}`;
  return `apiVersion: ${GROUP}/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer.base}
${ca}
    audiences: [plat, other]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.exp - claims.iat <= 3600'
    message: token lifetime too long
  claimMappings:
    username:
      expression: '${usernameExpression.replace(/'/g, "''")}'
    groups:
      expression: 'claims.roles.map(r, "role:" + r)'
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
  userValidationRules:
  - expression: '!user.username.startsWith("oidc:system:")'
    message: no system users
- issuer:
    url: ${issuer.base}/second
${ca}
    audiences: [plat]
  claimMappings:
    username:
      claim: email
      prefix: ''
- issuer:
    url: https://idp.internal/third
    discoveryURL: ${issuer.base}/third-discovery
${ca}
    audiences: [plat]
  claimMappings:
    username:
      claim: sub
      prefix: 'third:'
anonymous:
  enabled: true
  conditions:
  - path: /livez
  - path: /readyz
`;
}

async function whoami(token: string): Promise<{ status: number; user?: any }> {
  const r = await request(
    s.secureUrl,
    tls,
    'POST',
    SSR,
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
  return { status: r.status, user: r.json?.status?.userInfo };
}
/** Polls (bounded) until the check passes: keys arrive in the background, reloads follow file events. */
async function eventually<T>(get: () => Promise<T>, ok: (t: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let v = await get();
  for (let i = 0; i < 200 && !ok(v) && Date.now() < deadline; i++) {
    await new Promise((d) => setTimeout(d, 50));
    v = await get();
  }
  return v;
}

before(async () => {
  pki = new Pki().ca('idp-ca').server('idp-ca', 'idp');
  issuer = await new TestIssuer().start(pki, 'idp');
  issuer.discovery.set('/second/.well-known/openid-configuration', `${issuer.base}/second`);
  issuer.discovery.set('/third-discovery', 'https://idp.internal/third');
  writeFileSync(pki.path('authn.yaml'), config());
  s = await startAuthServer(['--authentication-config', pki.path('authn.yaml')]);
  s.proc.stderr!.on('data', (d) => {
    stderr += d;
  });
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  issuer?.close();
  pki?.cleanup();
});

const claims = { sub: 'alice', hd: 'example.com', roles: ['admin', 'dev'], tenant: 't1' };

test('CEL mappings: username, groups, uid and extra; any configured audience', async () => {
  const r = await eventually(
    async () => whoami(await issuer.token(claims)),
    (x) => x.status === 201,
  );
  assert.equal(r.status, 201);
  assert.deepEqual(r.user, {
    username: 'oidc:alice',
    uid: 'alice',
    groups: ['role:admin', 'role:dev', 'system:authenticated'],
    extra: { 'example.com/tenant': ['t1'] },
  });
  assert.equal((await whoami(await issuer.token(claims, { aud: 'other' }))).status, 201);
  assert.equal((await whoami(await issuer.token(claims, { aud: 'nobody' }))).status, 401);
});

test('claim validation (claim and CEL) and user validation rules refuse with 401', async () => {
  const { hd: _hd, ...noHd } = claims;
  assert.equal((await whoami(await issuer.token(noHd))).status, 401, 'required claim missing');
  assert.equal((await whoami(await issuer.token({ ...claims, hd: 'evil.com' }))).status, 401, 'required value differs');
  assert.equal((await whoami(await issuer.token(claims, { expIn: 7200 }))).status, 401, 'CEL rule: lifetime');
  assert.equal(
    (await whoami(await issuer.token({ ...claims, sub: 'system:admin' }))).status,
    401,
    'user validation rule',
  );
  assert.equal(
    (await whoami(await issuer.token({ ...claims, roles: 'not-a-list' }))).status,
    401,
    'a mapping that fails to evaluate',
  );
});

test('several issuers: claim mapping with an empty prefix, and a discoveryURL override', async () => {
  const second = await eventually(
    async () => whoami(await issuer.token({ sub: 'b', email: 'bob@example.com' }, { iss: `${issuer.base}/second` })),
    (x) => x.status === 201,
  );
  assert.equal(second.user?.username, 'bob@example.com');
  const third = await eventually(
    async () => whoami(await issuer.token({ sub: 'carol' }, { iss: 'https://idp.internal/third' })),
    (x) => x.status === 201,
  );
  assert.equal(third.user?.username, 'third:carol');
});

test('anonymous.conditions: anonymous requests only on the listed paths', async () => {
  assert.notEqual((await request(s.secureUrl, tls, 'GET', '/livez')).status, 401);
  assert.notEqual((await request(s.secureUrl, tls, 'GET', '/readyz')).status, 401);
  for (const path of ['/healthz', '/version', '/api/v1/namespaces'])
    assert.equal((await request(s.secureUrl, tls, 'GET', path)).status, 401, path);
});

test('reload: a changed file applies; a broken one keeps the last good configuration and says why', async () => {
  // written elsewhere and renamed into place, as config maps and editors do
  writeFileSync(pki.path('authn.yaml.new'), config('"v2:" + claims.sub'));
  renameSync(pki.path('authn.yaml.new'), pki.path('authn.yaml'));
  const v2 = await eventually(
    async () => whoami(await issuer.token(claims)),
    (x) => x.user?.username === 'v2:alice',
  );
  assert.equal(v2.user?.username, 'v2:alice');
  assert.match(stderr, /authn\.yaml \(sha256 [0-9a-f]+\): reloaded, 3 JWT authenticator\(s\)/);
  writeFileSync(pki.path('authn.yaml'), config('1 +'));
  const logged = await eventually(
    async () => stderr,
    (e) => /keeping the last good configuration/.test(e),
  );
  assert.match(
    logged,
    /invalid authentication config, keeping the last good configuration: jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "1 \+": compilation failed/,
  );
  assert.equal((await whoami(await issuer.token(claims))).user?.username, 'v2:alice');
});

const ctx = { disallowedIssuers: ['https://sa.issuer'], reservedDomains: ['plat.io', 'platform.io'] };
const doc = (jwt: unknown[], extra = '') =>
  JSON.stringify({ apiVersion: `${GROUP}/v1beta1`, kind: 'AuthenticationConfiguration', jwt }) + extra;
const jwt = (o: any = {}) => ({
  issuer: { url: 'https://idp', audiences: ['a'], ...o.issuer },
  claimMappings: { username: { claim: 'sub', prefix: '' }, ...o.claimMappings },
  ...o.rest,
});

test('validation errors name the field', () => {
  const cases: [unknown[], RegExp][] = [
    [
      [jwt({ issuer: { url: 'http://idp' } })],
      /^jwt\[0\]\.issuer\.url: Invalid value: "http:\/\/idp": URL scheme must be https$/,
    ],
    [
      [jwt({ issuer: { url: 'https://sa.issuer' } })],
      /jwt\[0\]\.issuer\.url: Invalid value: "https:\/\/sa.issuer": URL must not overlap with disallowed issuers/,
    ],
    [[jwt(), jwt()], /^jwt\[1\]\.issuer\.url: Duplicate value: "https:\/\/idp"$/],
    [
      [jwt({ issuer: { audiences: [] } })],
      /^jwt\[0\]\.issuer\.audiences: Required value: at least one jwt\[0\]\.issuer\.audiences is required$/,
    ],
    [
      [jwt({ issuer: { audiences: ['a', 'b'] } })],
      /jwt\[0\]\.issuer\.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences/,
    ],
    [[jwt({ issuer: { discoveryURL: 'https://idp' } })], /discoveryURL must be different from URL/],
    [
      [jwt({ issuer: { certificateAuthority: 'junk' } })],
      /jwt\[0\]\.issuer\.certificateAuthority: Invalid value: "<omitted>"/,
    ],
    [
      [jwt({ claimMappings: { username: {} } })],
      /^jwt\[0\]\.claimMappings\.username: Required value: claim or expression is required$/,
    ],
    [
      [jwt({ claimMappings: { username: { claim: 'sub' } } })],
      /^jwt\[0\]\.claimMappings\.username\.prefix: Required value: prefix is required when claim is set/,
    ],
    [
      [jwt({ claimMappings: { username: { expression: 'claims.sub', prefix: 'x' } } })],
      /jwt\[0\]\.claimMappings\.username\.prefix: Invalid value: "x": may not be specified when expression is set/,
    ],
    [
      [jwt({ claimMappings: { username: { expression: 'claims.email' } } })],
      /claims\.email_verified must be used in claimMappings\.username\.expression/,
    ],
    [
      [jwt({ rest: { claimValidationRules: [{ expression: '1 +' }] } })],
      /^jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value: "1 \+": compilation failed/,
    ],
    [
      [jwt({ rest: { claimValidationRules: [{ claim: 'a', expression: 'true' }] } })],
      /claim and expression can't both be set/,
    ],
    [
      [jwt({ claimMappings: { extra: [{ key: 'plat.io/x', valueExpression: '"v"' }] } })],
      /jwt\[0\]\.claimMappings\.extra\[0\]\.key: Invalid value: "plat.io\/x": plat.io, platform.io and their subdomains are reserved for platform use/,
    ],
    [[jwt({ claimMappings: { extra: [{ key: 'Example.com/x', valueExpression: '"v"' }] } })], /key must be lowercase/],
    [
      [jwt({ claimMappings: { extra: [{ key: 'nodomain', valueExpression: '"v"' }] } })],
      /must be a domain-prefixed path/,
    ],
    [
      [jwt({ rest: { userValidationRules: [{ expression: '' }] } })],
      /^jwt\[0\]\.userValidationRules\[0\]\.expression: Required value$/,
    ],
    [
      Array.from({ length: 65 }, (_, i) => jwt({ issuer: { url: `https://idp${i}` } })),
      /^jwt: Too many: 65: must have at most 64 items$/,
    ],
  ];
  for (const [list, re] of cases) {
    assert.throws(
      () => parseAuthenticationConfig(doc(list), GROUP, ctx),
      (e: Error) => re.test(e.message),
      re.source,
    );
  }
  // the email-verified rule is satisfied by a claim validation expression
  parseAuthenticationConfig(
    doc([
      jwt({
        claimMappings: { username: { expression: 'claims.email' } },
        rest: { claimValidationRules: [{ expression: 'claims.email_verified' }] },
      }),
    ]),
    GROUP,
    ctx,
  );
  assert.throws(
    () =>
      parseAuthenticationConfig(
        '{"apiVersion":"apiserver.config.plat.io/v9","kind":"AuthenticationConfiguration"}',
        GROUP,
        ctx,
      ),
    /no kind "AuthenticationConfiguration" is registered for version "apiserver.config.plat.io\/v9"/,
  );
  assert.throws(
    () =>
      parseAuthenticationConfig(
        doc([]).replace(/}$/, ',"anonymous":{"enabled":false,"conditions":[{"path":"/livez"}]}}'),
        GROUP,
        ctx,
      ),
    /anonymous\.conditions: Invalid value: .*enabled should be set to true when conditions are defined/,
  );
  // several errors at once, as an aggregate
  assert.throws(
    () => parseAuthenticationConfig(doc([jwt({ issuer: { url: 'http://a', audiences: [] } })]), GROUP, ctx),
    /^Error: \[jwt\[0\]\.issuer\.url: .*, jwt\[0\]\.issuer\.audiences: .*\]$/,
  );
});

test('startup errors: the field, and --anonymous-auth next to anonymous', async () => {
  writeFileSync(pki.path('bad.yaml'), doc([jwt({ issuer: { url: 'http://idp' } })]));
  const bad = await startupError(['--authentication-config', pki.path('bad.yaml')]);
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /--authentication-config .*bad.yaml: invalid authentication config: jwt\[0\]\.issuer\.url: Invalid value: "http:\/\/idp": URL scheme must be https/,
  );
  writeFileSync(
    pki.path('anon.yaml'),
    `apiVersion: ${GROUP}/v1beta1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: false\n`,
  );
  const anon = await startupError(['--authentication-config', pki.path('anon.yaml'), '--anonymous-auth', 'true']);
  assert.match(
    anon.stderr,
    /--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file/,
  );
});
