/**
 * Client certificates through the node:tls front (`--client-ca-file`): CN and O become the user,
 * untrusted and expired certificates are 401, a forged identity header is ignored, and the
 * relay keeps HTTP semantics (keep-alive, chunked bodies, watch streams).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from './helpers.js';
import { grant } from '../authz/helpers.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const SSR_BODY = { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' };

let pki: Pki;
let s: AuthServer;
let ca: Buffer;
const client = (name?: string, extra: Partial<TlsClient> = {}): TlsClient => ({
  ca,
  ...(name ? { cert: pki.read(`${name}.crt`), key: pki.read(`${name}.key`) } : {}),
  ...extra,
});
const whoami = (tls: TlsClient, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, 'POST', SSR, SSR_BODY, headers);

before(async () => {
  pki = new Pki()
    .ca('client-ca')
    .ca('rogue-ca')
    .ca('serving-ca')
    .server('serving-ca', 'apiserver')
    .client('client-ca', 'carol', '/O=system:masters/O=devs/CN=carol')
    .client('rogue-ca', 'mallory', '/O=system:masters/CN=mallory')
    .client('client-ca', 'old', '/CN=old', true)
    .client('client-ca', 'nameless', '/O=devs');
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a\n');
  s = await startAuthServer([
    '--client-ca-file',
    pki.path('client-ca.crt'),
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--tls-cert-file',
    pki.path('apiserver.crt'),
    '--tls-private-key-file',
    pki.path('apiserver.key'),
  ]);
  ca = pki.read('serving-ca.crt');
  // the secure port authorizes (RBAC): anonymous may ask who it is here
  await grant(
    s.url,
    'anonymous-whoami',
    [{ verbs: ['create'], apiGroups: ['authentication.plat.io'], resources: ['selfsubjectreviews'] }],
    ['system:unauthenticated'],
  );
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('the given serving pair is used (nothing generated); a verified certificate: CN is the username, each O a group', async () => {
  // only the service account key is generated there (src/auth/sa-keys.ts): no CA, no serving pair
  assert.equal(existsSync(`${s.dataDir}/pki/ca.crt`), false);
  assert.equal(existsSync(`${s.dataDir}/pki/apiserver.crt`), false);
  const r = await whoami(client('carol'));
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.status.userInfo, {
    username: 'carol',
    groups: ['system:masters', 'devs', 'system:authenticated'],
  });
  assert.equal((await request(s.secureUrl, client('carol'), 'GET', '/api/v1/namespaces')).status, 200);
});

test('untrusted, expired and nameless certificates are 401; no certificate is anonymous or the bearer token', async () => {
  for (const name of ['mallory', 'old', 'nameless']) {
    const r = await whoami(client(name));
    assert.equal(r.status, 401, `${name}: ${r.text}`);
    assert.equal(r.json.reason, 'Unauthorized');
  }
  assert.equal((await whoami(client())).json.status.userInfo.username, 'system:anonymous');
  assert.equal(
    (await whoami(client(), { authorization: 'Bearer alice-token' })).json.status.userInfo.username,
    'alice',
  );
  assert.equal(
    (await whoami(client('mallory'), { authorization: 'Bearer alice-token' })).json.status.userInfo.username,
    'alice',
    'a valid token still authenticates next to a rejected certificate (first success wins)',
  );
});

test('a client cannot forge the identity header the front adds', async () => {
  const forged = `${'00'.repeat(16)} ${Buffer.from(JSON.stringify({ verified: true, user: { username: 'root', groups: ['system:masters'] } })).toString('base64url')}`;
  const r = await whoami(client(), { 'x-plat-tls-client-identity': forged });
  assert.equal(r.json.status.userInfo.username, 'system:anonymous');
  const withCert = await whoami(client('carol'), { 'X-Plat-TLS-Client-Identity': forged });
  assert.equal(withCert.json.status.userInfo.username, 'carol');
});

test('keep-alive connection, chunked request body, and impersonation by a certificate in system:masters', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const tls = client('carol', { agent });
  for (let i = 0; i < 5; i++) assert.equal((await whoami(tls)).json.status.userInfo.username, 'carol');
  const created = await new Promise<{ status: number; body: string }>((done, fail) => {
    const req = httpsRequest(
      new URL('/api/v1/namespaces/default/configmaps', s.secureUrl),
      {
        method: 'POST',
        agent,
        ca,
        cert: tls.cert,
        key: tls.key,
        servername: 'localhost',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => done({ status: res.statusCode!, body }));
      },
    );
    req.on('error', fail);
    req.write('{"apiVersion":"v1","kind":"ConfigMap",');
    req.write('"metadata":{"name":"chunked"},"data":{"k":"' + 'x'.repeat(20_000) + '"}}');
    req.end();
  });
  assert.equal(created.status, 201, created.body);
  const imp = await whoami(tls, { 'impersonate-user': 'dave', 'impersonate-group': 'ops' });
  assert.deepEqual(imp.json.status.userInfo, { username: 'dave', groups: ['ops', 'system:authenticated'] });
  assert.equal((await whoami(client(), { 'impersonate-user': 'dave' })).status, 403);
  agent.destroy();
});

test('a watch streams through the front', { timeout: 20_000 }, async () => {
  const tls = client('carol');
  let seen = '';
  const ctrl = new AbortController();
  let sawEvent!: () => void;
  const event = new Promise<void>((resolve) => {
    sawEvent = resolve;
  });
  await new Promise<void>((ready, fail) => {
    const req = httpsRequest(
      new URL('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0', s.secureUrl),
      {
        ca,
        cert: tls.cert,
        key: tls.key,
        servername: 'localhost',
        signal: ctrl.signal,
      },
      (res) => {
        assert.equal(res.statusCode, 200);
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          seen += c;
          if (seen.includes('"name":"watched"')) sawEvent();
        });
        res.on('error', () => {});
        ready();
      },
    );
    req.on('error', (e) => {
      if (e.name !== 'AbortError') fail(e);
    });
    req.end();
  });
  assert.equal(
    (
      await request(s.secureUrl, tls, 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'watched' },
      })
    ).status,
    201,
  );
  await event;
  ctrl.abort();
  assert.match(seen, /"type":"ADDED".*"name":"watched"/s);
});
