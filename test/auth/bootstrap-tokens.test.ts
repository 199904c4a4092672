/**
 * Bootstrap tokens: the authenticator's rules (unit) and the server keeping its secrets current
 * from change events (create, update, delete through the API, then HTTPS requests with the token).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BootstrapTokens, bootstrapGroups, expired } from '../../src/auth/bootstrap-tokens.js';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import { request, startAuthServer, type AuthServer, type TlsClient } from './helpers.js';
import { request as plainRequest } from '../helpers/server.js';
import { grant } from '../authz/helpers.js';

const TYPE = 'bootstrap.platform.io/token';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const secretObj = (id: string, data: Record<string, string>, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `bootstrap-token-${id}`, namespace: 'plat-system' },
  type: TYPE,
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  ...extra,
});
const ev = (type: ChangeEvent['type'], obj: any): ChangeEvent =>
  ({
    typeKey: '/secrets',
    type,
    rv: 1,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name,
    json: JSON.stringify(obj),
    labels: undefined,
    fields: {},
  }) as ChangeEvent;
const VALID = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };

test('bootstrap token rules: format, type, secret, id, expiry, usage, extra groups', () => {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const b = new BootstrapTokens('plat-system', TYPE, () => now);
  b.observe([
    ev(
      'ADDED',
      secretObj('abcdef', {
        ...VALID,
        expiration: '2030-01-02T00:00:00Z',
        'auth-extra-groups': 'system:bootstrappers:nodes,system:bootstrappers:x-1',
      }),
    ),
  ]);
  assert.deepEqual(b.authenticate('abcdef.0123456789abcdef'), {
    kind: 'user',
    user: {
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:bootstrappers:x-1'],
    },
  });
  assert.equal(b.authenticate('abcdef.0123456789abcdee').kind, 'error');
  for (const notMine of [
    'abcdef.0123456789abcde',
    'ABCDEF.0123456789abcdef',
    'zzzzzz.0123456789abcdef',
    'abcdef-0123456789abcdef',
    '',
  ]) {
    assert.deepEqual(b.authenticate(notMine), { kind: 'notMine' }, notMine);
  }
  now = Date.parse('2030-01-02T00:00:00Z');
  assert.match((b.authenticate('abcdef.0123456789abcdef') as any).reason, /has expired/);
  const cases: [Record<string, string>, object, RegExp][] = [
    [{ ...VALID, 'usage-bootstrap-authentication': 'false' }, {}, /usage-bootstrap-authentication=true/],
    [{ ...VALID, 'usage-bootstrap-authentication': '' }, {}, /usage-bootstrap-authentication=true/],
    [{ ...VALID, 'token-id': 'abcdeg' }, {}, /token-id/],
    [{ ...VALID, 'auth-extra-groups': 'system:nodes' }, {}, /auth-extra-groups/],
    [{ ...VALID, 'auth-extra-groups': 'system:bootstrappers:' }, {}, /auth-extra-groups/],
    [{ ...VALID, expiration: 'tomorrow' }, {}, /has expired/],
    [VALID, { type: 'Opaque' }, /invalid type/],
    [
      VALID,
      {
        metadata: {
          name: 'bootstrap-token-abcdef',
          namespace: 'plat-system',
          deletionTimestamp: '2030-01-01T00:00:00Z',
        },
      },
      /deleted/,
    ],
  ];
  for (const [data, extra, reason] of cases) {
    b.observe([ev('MODIFIED', secretObj('abcdef', data, extra))]);
    const r = b.authenticate('abcdef.0123456789abcdef');
    assert.equal(r.kind, 'error');
    assert.match((r as any).reason, reason);
    assert.doesNotMatch((r as any).reason, /0123456789abcdef/, 'the secret never appears in reasons');
  }
  b.observe([ev('MODIFIED', secretObj('abcdef', VALID))]);
  assert.equal(b.authenticate('abcdef.0123456789abcdef').kind, 'user');
  b.observe([ev('DELETED', secretObj('abcdef', VALID))]);
  assert.deepEqual(b.authenticate('abcdef.0123456789abcdef'), { kind: 'notMine' });
  // other namespaces and names are ignored
  b.load([
    {
      typeKey: '/secrets',
      namespace: 'default',
      name: 'bootstrap-token-abcdef',
      apiVersion: 'v1',
      json: JSON.stringify(secretObj('abcdef', VALID)),
    },
  ]);
  b.observe([ev('ADDED', { ...secretObj('abcdef', VALID), metadata: { name: 'abcdef', namespace: 'plat-system' } })]);
  assert.equal(b.size, 0);
});

test('bootstrap groups are sorted and deduplicated; expiration is RFC 3339', () => {
  assert.deepEqual(bootstrapGroups('system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b'), [
    'system:bootstrappers',
    'system:bootstrappers:a',
    'system:bootstrappers:b',
  ]);
  assert.deepEqual(bootstrapGroups(undefined), ['system:bootstrappers']);
  assert.ok('error' in (bootstrapGroups('system:bootstrappers:A') as object));
  assert.equal(expired('2030-01-01T00:00:00+01:00', Date.parse('2029-12-31T23:30:00Z')), true);
  assert.equal(expired('2030-01-01T00:00:00Z', Date.parse('2029-12-31T23:30:00Z')), false);
  assert.equal(expired(undefined, 0), false);
});

let s: AuthServer;
let tls: TlsClient;
before(async () => {
  s = await startAuthServer(['--enable-bootstrap-token-auth']);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  await grant(
    s.url,
    'bootstrap-list-ns',
    [{ verbs: ['list'], apiGroups: [''], resources: ['namespaces'] }],
    ['system:bootstrappers:listers'],
  );
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

async function whoami(token: string): Promise<{ status: number; user?: any }> {
  const r = await request(
    s.secureUrl,
    tls,
    'POST',
    '/apis/authentication.plat.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
  return { status: r.status, user: r.json?.status?.userInfo };
}

/** Polls (bounded) until the token's answer has the wanted status: the secret arrives by change event. */
async function until(token: string, status: number): Promise<{ status: number; user?: any }> {
  const deadline = Date.now() + 5000;
  for (let i = 0; i < 200; i++) {
    const r = await whoami(token);
    if (r.status === status || Date.now() > deadline) return r;
    await new Promise((d) => setTimeout(d, 25));
  }
  return whoami(token);
}

test('server: a bootstrap token secret created, changed and deleted through the API', async () => {
  const token = 'k7p2x9.q4w8e1r5t2y6u3i0';
  const path = '/api/v1/namespaces/plat-system/secrets';
  assert.equal((await whoami(token)).status, 401);
  const created = await plainRequest(s.url, 'POST', path, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-k7p2x9', namespace: 'plat-system' },
    type: TYPE,
    stringData: {
      'token-id': 'k7p2x9',
      'token-secret': 'q4w8e1r5t2y6u3i0',
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': 'system:bootstrappers:listers',
    },
  });
  assert.equal(created.status, 201, created.text);
  const ok = await until(token, 201);
  assert.equal(ok.status, 201);
  assert.deepEqual(ok.user, {
    username: 'system:bootstrap:k7p2x9',
    groups: ['system:bootstrappers', 'system:bootstrappers:listers', 'system:authenticated'],
  });
  const list = await request(s.secureUrl, tls, 'GET', '/api/v1/namespaces', undefined, {
    authorization: `Bearer ${token}`,
  });
  assert.equal(list.status, 200, list.text);
  // an expiration in the past revokes it
  const patched = await plainRequest(
    s.url,
    'PATCH',
    `${path}/bootstrap-token-k7p2x9`,
    { stringData: { expiration: '2020-01-01T00:00:00Z' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  const gone = await until(token, 401);
  assert.equal(gone.status, 401);
  await plainRequest(
    s.url,
    'PATCH',
    `${path}/bootstrap-token-k7p2x9`,
    { data: { expiration: null } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal((await until(token, 201)).status, 201);
  assert.equal((await plainRequest(s.url, 'DELETE', `${path}/bootstrap-token-k7p2x9`)).status, 200);
  assert.equal((await until(token, 401)).status, 401);
});
