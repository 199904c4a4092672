/**
 * Authenticating proxy (`--requestheader-*`): identity headers are trusted only on a connection
 * whose client certificate chains to the requestheader CA with an allowed CN; everyone else's
 * copies are ignored. Real TLS connections with certificates made by openssl.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from './helpers.js';
import { grant } from '../authz/helpers.js';
import { userFromHeaders } from '../../src/auth/request-header.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const SSR_BODY = { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' };
let pki: Pki;
let s: AuthServer;
let open: AuthServer;
let base: string[];
const as = (name?: string): TlsClient => ({
  ca: pki.read('serving-ca.crt'),
  ...(name ? { cert: pki.read(`${name}.crt`), key: pki.read(`${name}.key`) } : {}),
});
async function whoami(
  server: AuthServer,
  cert: string | undefined,
  headers: Record<string, any>,
): Promise<{ status: number; user?: any }> {
  const r = await request(server.secureUrl, as(cert), 'POST', SSR, SSR_BODY, headers);
  return { status: r.status, user: r.json?.status?.userInfo };
}
const PROXIED = {
  'x-remote-user': 'dave',
  'x-remote-group': ['g1', 'g2'],
  'x-remote-extra-scopes': ['read', 'write'],
  'X-Remote-Extra-Reason': 'audit',
};

before(async () => {
  pki = new Pki()
    .ca('proxy-ca')
    .ca('client-ca')
    .ca('rogue-ca')
    .ca('serving-ca')
    .server('serving-ca', 'apiserver')
    .client('proxy-ca', 'front-proxy', '/CN=front-proxy')
    .client('proxy-ca', 'other-proxy', '/CN=other-proxy')
    .client('client-ca', 'carol', '/O=devs/CN=carol')
    .client('rogue-ca', 'rogue', '/CN=front-proxy');
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a\n');
  base = [
    '--tls-cert-file',
    pki.path('apiserver.crt'),
    '--tls-private-key-file',
    pki.path('apiserver.key'),
    '--requestheader-client-ca-file',
    pki.path('proxy-ca.crt'),
    '--requestheader-username-headers',
    'X-Remote-User,X-User',
    '--requestheader-group-headers',
    'X-Remote-Group',
    '--requestheader-extra-headers-prefix',
    'X-Remote-Extra-',
    '--token-auth-file',
    pki.path('tokens.csv'),
  ];
  s = await startAuthServer([
    ...base,
    '--client-ca-file',
    pki.path('client-ca.crt'),
    '--requestheader-allowed-names',
    'front-proxy,edge',
  ]);
  open = await startAuthServer(base);
  for (const x of [s, open]) {
    await grant(
      x.url,
      'anonymous-whoami',
      [{ verbs: ['create'], apiGroups: ['authentication.plat.io'], resources: ['selfsubjectreviews'] }],
      ['system:unauthenticated'],
    );
  }
});
after(async () => {
  await Promise.all([s?.stop(), open?.stop()]);
  s?.cleanup();
  open?.cleanup();
  pki?.cleanup();
});

test('a trusted proxy: user, every group value, extra entries (prefix stripped, lower-cased)', async () => {
  const r = await whoami(s, 'front-proxy', PROXIED);
  assert.equal(r.status, 201);
  assert.deepEqual(r.user, {
    username: 'dave',
    groups: ['g1', 'g2', 'system:authenticated'],
    extra: { scopes: ['read', 'write'], reason: ['audit'] },
  });
  // the first username header with a value
  assert.equal((await whoami(s, 'front-proxy', { 'x-remote-user': '', 'x-user': 'erin' })).user.username, 'erin');
  // a trusted proxy without a username header: its own certificate is not a user's (not the client CA), so 401, unless a token says who
  assert.equal((await whoami(s, 'front-proxy', {})).status, 401);
  assert.equal((await whoami(s, 'front-proxy', { authorization: 'Bearer alice-token' })).user.username, 'alice');
  // the proxy's headers win over a bearer token (the proxy authenticator runs first)
  assert.equal(
    (await whoami(s, 'front-proxy', { ...PROXIED, authorization: 'Bearer alice-token' })).user.username,
    'dave',
  );
});

test('headers from anyone else are ignored', async () => {
  // CN not in --requestheader-allowed-names: the headers are not trusted
  assert.equal((await whoami(s, 'other-proxy', PROXIED)).status, 401);
  assert.equal(
    (await whoami(s, 'other-proxy', { ...PROXIED, authorization: 'Bearer alice-token' })).user.username,
    'alice',
  );
  // a user's client certificate: the certificate's user
  assert.deepEqual((await whoami(s, 'carol', PROXIED)).user, {
    username: 'carol',
    groups: ['devs', 'system:authenticated'],
  });
  // no certificate: anonymous; a bearer token: its user
  assert.equal((await whoami(s, undefined, PROXIED)).user.username, 'system:anonymous');
  assert.equal(
    (await whoami(s, undefined, { ...PROXIED, authorization: 'Bearer alice-token' })).user.username,
    'alice',
  );
  // the allowed CN on a certificate from another CA
  assert.equal((await whoami(s, 'rogue', PROXIED)).status, 401);
});

test('without --requestheader-allowed-names any certificate of the requestheader CA is a proxy; no client CA needed', async () => {
  assert.equal((await whoami(open, 'other-proxy', PROXIED)).user.username, 'dave');
  assert.equal((await whoami(open, 'front-proxy', { 'x-remote-user': 'frank' })).user.username, 'frank');
  assert.equal((await whoami(open, 'carol', PROXIED)).status, 401, "no --client-ca-file: carol's CA is unknown");
  assert.equal((await whoami(open, undefined, PROXIED)).user.username, 'system:anonymous');
});

test('header rules and flag errors', async () => {
  const cfg = {
    usernameHeaders: ['X-Remote-User'],
    groupHeaders: ['X-Remote-Group', 'X-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
  };
  assert.deepEqual(
    userFromHeaders(
      [
        ['x-group', 'b'],
        ['x-remote-group', 'a'],
        ['x-remote-user', 'u'],
        ['x-remote-group', ''],
        ['x-remote-extra-a%2fb', 'v'],
        ['x-remote-extra-bad%zz', 'w'],
      ],
      cfg,
    ),
    { username: 'u', groups: ['a', 'b'], extra: { 'a/b': ['v'], 'bad%zz': ['w'] } },
  );
  assert.equal(userFromHeaders([['x-remote-group', 'a']], cfg), undefined);
  const e = await startupError(['--requestheader-client-ca-file', pki.path('proxy-ca.crt')]);
  assert.match(e.stderr, /--requestheader-username-headers is required with --requestheader-client-ca-file/);
  const m = await startupError([
    '--secure-port',
    '0',
    '--requestheader-client-ca-file',
    pki.path('missing.crt'),
    '--requestheader-username-headers',
    'X-Remote-User',
  ]);
  assert.match(m.stderr, /--requestheader-client-ca-file: cannot read .*missing.crt/);
});
