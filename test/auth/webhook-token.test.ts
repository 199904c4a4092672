/**
 * Webhook token authentication against a loopback HTTPS webhook that requires the API server's
 * client certificate: both TokenReview versions, the cache (hits, refusals, TTL expiry, TTL 0),
 * retries, a wrong apiVersion, audiences, and startup errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Pki, request, startAuthServer, startupError, type AuthServer, type TlsClient } from './helpers.js';
import { request as plainRequest } from '../helpers/server.js';
import { parseClientConfig } from '../../src/auth/kubeconfig.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
let pki: Pki;
let hook: Server;
let hookUrl: string;
const seen: { apiVersion: string; token: string; audiences?: string[]; cn?: string }[] = [];
const calls = (token: string) => seen.filter((r) => r.token === token).length;
let failOnce = true;
const servers: AuthServer[] = [];

before(async () => {
  pki = new Pki()
    .ca('hook-ca')
    .server('hook-ca', 'hook')
    .ca('client-ca')
    .client('client-ca', 'apiserver', '/CN=apiserver');
  hook = createServer(
    {
      key: pki.read('hook.key'),
      cert: pki.read('hook.crt'),
      ca: pki.read('client-ca.crt'),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const r = JSON.parse(body);
        const cn = (req.socket as any).getPeerCertificate?.()?.subject?.CN;
        seen.push({ apiVersion: r.apiVersion, token: r.spec.token, audiences: r.spec.audiences, cn });
        const reply = (status: object, apiVersion = r.apiVersion) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ apiVersion, kind: 'TokenReview', status }));
        };
        switch (r.spec.token) {
          case 'hook-alice':
            return reply({
              authenticated: true,
              user: { username: 'alice', uid: 'a-1', groups: ['dev'], extra: { scopes: ['read', 'write'] } },
            });
          case 'hook-denied':
            return reply({ authenticated: false, error: 'token revoked' });
          case 'hook-silent':
            return reply({ authenticated: false });
          case 'hook-wrong-version':
            return reply({ authenticated: true, user: { username: 'x' } }, 'authentication.plat.io/v0');
          case 'hook-aud':
            return reply({ authenticated: true, user: { username: 'aud-user' }, audiences: r.spec.audiences });
          case 'hook-flaky':
            if (failOnce) {
              failOnce = false;
              res.writeHead(503);
              return res.end('busy');
            }
            return reply({ authenticated: true, user: { username: 'flaky' } });
          default:
            return reply({ authenticated: false });
        }
      });
    },
  );
  await new Promise<void>((d) => hook.listen(0, '127.0.0.1', d));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}/authenticate`;
  // relative paths resolve against the kubeconfig's directory
  writeFileSync(
    pki.path('webhook.kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: hook',
      '  cluster:',
      `    server: ${hookUrl}`,
      '    certificate-authority: hook-ca.crt',
      'users:',
      '- name: api',
      '  user:',
      '    client-certificate: apiserver.crt',
      '    client-key: apiserver.key',
      'contexts:',
      '- name: c',
      '  context: {cluster: hook, user: api}',
      'current-context: c',
      '',
    ].join('\n'),
  );
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of servers) s.cleanup();
  hook?.close();
  pki?.cleanup();
});

async function serve(...args: string[]): Promise<{ s: AuthServer; tls: TlsClient }> {
  const s = await startAuthServer([
    '--authentication-token-webhook-config-file',
    pki.path('webhook.kubeconfig'),
    ...args,
  ]);
  servers.push(s);
  return { s, tls: { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) } };
}
const whoami = (x: { s: AuthServer; tls: TlsClient }, token: string) =>
  request(
    x.s.secureUrl,
    x.tls,
    'POST',
    SSR,
    { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );

test('v1beta1 by default: the user of the webhook, with the client certificate of the kubeconfig; answers cached', async () => {
  const x = await serve();
  const r = await whoami(x, 'hook-alice');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.status.userInfo, {
    username: 'alice',
    uid: 'a-1',
    groups: ['dev', 'system:authenticated'],
    extra: { scopes: ['read', 'write'] },
  });
  const first = seen.find((q) => q.token === 'hook-alice')!;
  assert.equal(first.apiVersion, 'authentication.plat.io/v1beta1');
  assert.equal(first.cn, 'apiserver');
  // no --api-audiences: the API audience is the default service account issuer, as upstream
  assert.deepEqual(first.audiences, ['https://platform.default.svc.cluster.local']);
  for (let i = 0; i < 3; i++) assert.equal((await whoami(x, 'hook-alice')).status, 201);
  assert.equal(calls('hook-alice'), 1, 'the cache answers repeated tokens');
  // refusals: 401 with the generic message, and cached too
  for (const token of ['hook-denied', 'hook-silent']) {
    for (let i = 0; i < 2; i++) {
      const bad = await whoami(x, token);
      assert.equal(bad.status, 401);
      assert.equal(bad.json.message, 'Unauthorized');
      assert.doesNotMatch(bad.text, /revoked|hook-/);
    }
    assert.equal(calls(token), 1, token);
  }
  // an answer in another apiVersion is an error
  assert.equal((await whoami(x, 'hook-wrong-version')).status, 401);
  // a 503 is retried with backoff
  const flaky = await whoami(x, 'hook-flaky');
  assert.equal(flaky.status, 201, flaky.text);
  assert.equal(calls('hook-flaky'), 2);
});

test('TokenReview through the API reaches the webhook; status.error and audiences', async () => {
  const x = await serve();
  const tr = (token: string, audiences?: string[]) =>
    plainRequest(x.s.url, 'POST', '/apis/authentication.plat.io/v1/tokenreviews', {
      apiVersion: 'authentication.plat.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences },
    });
  const denied = await tr('hook-denied');
  assert.equal(denied.json.status.authenticated, false);
  assert.equal(denied.json.status.error, 'token revoked');
  const aud = await tr('hook-aud', ['api-x']);
  assert.equal(aud.json.status.authenticated, true, aud.text);
  assert.deepEqual(aud.json.status.audiences, ['api-x']);
  assert.deepEqual(seen.filter((q) => q.token === 'hook-aud').at(-1)!.audiences, ['api-x']);
  // a user answer without audiences is valid for the API audiences (none here): not for api-x
  const alice = await tr('hook-alice', ['api-x']);
  assert.equal(alice.json.status.authenticated, false);
});

test('--authentication-token-webhook-version v1 and a short cache TTL expire entries', async () => {
  const x = await serve(
    '--authentication-token-webhook-version',
    'v1',
    '--authentication-token-webhook-cache-ttl',
    '1s',
  );
  const before = seen.length;
  assert.equal((await whoami(x, 'hook-alice')).status, 201);
  assert.equal(seen.at(-1)!.apiVersion, 'authentication.plat.io/v1');
  const n = calls('hook-alice');
  // poll (bounded) until the entry expires and the webhook is asked again
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < 400 && calls('hook-alice') === n && Date.now() < deadline; i++) {
    assert.equal((await whoami(x, 'hook-alice')).status, 201);
    await new Promise((d) => setTimeout(d, 50));
  }
  assert.equal(calls('hook-alice'), n + 1);
  assert.ok(seen.length > before);
  const zero = await serve('--authentication-token-webhook-cache-ttl', '0');
  const m = calls('hook-alice');
  for (let i = 0; i < 3; i++) assert.equal((await whoami(zero, 'hook-alice')).status, 201);
  assert.equal(calls('hook-alice'), m + 3, 'TTL 0 disables the cache');
});

test('startup errors name the flag', async () => {
  const v = await startupError(['--authentication-token-webhook-version', 'v2']);
  assert.match(
    v.stderr,
    /--authentication-token-webhook-version: unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"/,
  );
  const ttl = await startupError(['--authentication-token-webhook-cache-ttl', 'soon']);
  assert.match(ttl.stderr, /--authentication-token-webhook-cache-ttl must be a duration/);
  writeFileSync(pki.path('no-context.kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: []\n');
  const nc = await startupError(['--authentication-token-webhook-config-file', pki.path('no-context.kubeconfig')]);
  assert.match(
    nc.stderr,
    /--authentication-token-webhook-config-file .*no-context.kubeconfig: invalid configuration: current-context must be set/,
  );
  const missing = await startupError(['--authentication-token-webhook-config-file', pki.path('nope')]);
  assert.match(missing.stderr, /--authentication-token-webhook-config-file .*nope: cannot read/);
});

test('kubeconfig parsing: data fields, token, conflicts', () => {
  const c = parseClientConfig(
    [
      'clusters: [{name: a, cluster: {server: "https://h:1", certificate-authority-data: "' +
        Buffer.from('CA').toString('base64') +
        '"}}]',
      'users: [{name: u, user: {token: t0}}]',
      'contexts: [{name: x, context: {cluster: a, user: u}}]',
      'current-context: x',
    ].join('\n'),
    '/',
  );
  assert.equal(c.server, 'https://h:1');
  assert.equal(c.ca!.toString(), 'CA');
  assert.equal(c.token, 't0');
  assert.throws(
    () =>
      parseClientConfig(
        'clusters: [{name: a, cluster: {server: "https://h", certificate-authority: x, certificate-authority-data: eA==}}]\ncontexts: [{name: x, context: {cluster: a}}]\ncurrent-context: x',
        '/',
      ),
    /certificate-authority-data and certificate-authority are both specified/,
  );
  assert.throws(
    () => parseClientConfig('contexts: [{name: x, context: {cluster: a}}]\ncurrent-context: x', '/'),
    /cluster "a" not found/,
  );
  assert.throws(
    () =>
      parseClientConfig(
        'clusters: [{name: a, cluster: {}}]\ncontexts: [{name: x, context: {cluster: a}}]\ncurrent-context: x',
        '/',
      ),
    /no server found/,
  );
});
