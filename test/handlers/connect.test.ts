/**
 * The proxy subresources (nodes/N/proxy to the node agent, pods/P[:port]/proxy and
 * services/S[:port]/proxy to a ready endpoint) with upstream's header handling and path
 * rewriting, and the authorization of each connect subresource. Loopback backends are allowed
 * by the hidden flag --proxy-allow-loopback (upstream never proxies to loopback addresses).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAuthServer, request as tlsRequest, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request } from '../helpers/server.js';
import { startFakeKubelet, type FakeKubelet } from '../helpers/fake-kubelet.js';

let s: AuthServer;
let agent: FakeKubelet;
let backend: Server;
let backendPort = 0;
let tls: TlsClient;
const NS = '/api/v1/namespaces/default';

before(async () => {
  backend = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('x-backend', 'yes');
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
  backendPort = (backend.address() as { port: number }).port;
  const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'plat-connect-'));
  writeFileSync(join(dir, 'tokens.csv'), 'bob-token,bob,1001,\n');
  s = await startAuthServer(
    ['--token-auth-file', join(dir, 'tokens.csv'), '--proxy-allow-loopback'],
    join(dir, 'data'),
  );
  const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f));
  tls = { ca: pki('ca.crt') };
  agent = await startFakeKubelet({ cert: pki('apiserver.crt'), key: pki('apiserver.key'), ca: pki('ca.crt') });
  const objects: [string, object][] = [
    [
      '/api/v1/nodes',
      {
        metadata: { name: 'n1' },
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: agent.port } },
        },
      },
    ],
    [
      `${NS}/pods`,
      {
        metadata: { name: 'web' },
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'x', ports: [{ containerPort: backendPort, name: 'http' }] }],
        },
      },
    ],
    [`${NS}/services`, { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } }],
    [
      `${NS}/endpoints`,
      {
        metadata: { name: 'web' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'http', port: backendPort }] }],
      },
    ],
    [`${NS}/services`, { metadata: { name: 'empty' }, spec: { ports: [{ port: 80 }] } }],
    [
      `${NS}/pods`,
      { metadata: { name: 'big' }, spec: { nodeName: 'n1', containers: [{ name: 'blast', image: 'x' }] } },
    ],
  ];
  for (const [path, body] of objects) assert.equal((await request(s.url, 'POST', path, body)).status, 201, path);
  const st = await request(s.url, 'PUT', `${NS}/pods/web/status`, {
    ...(await request(s.url, 'GET', `${NS}/pods/web`)).json,
    status: { phase: 'Running', podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }] },
  });
  assert.equal(st.status, 200, st.text);
});

after(async () => {
  await agent?.close();
  await new Promise<void>((r) => (backend ? backend.close(() => r()) : r()));
  if (s) {
    await s.stop();
    s.cleanup();
  }
});

test('nodes/N/proxy/path: method, path, query and body reach the agent; credentials do not; X-Forwarded-* set', async () => {
  const r = await request(s.url, 'POST', '/api/v1/nodes/n1/proxy/echo?x=1&y=2', 'payload', {
    'content-type': 'text/plain',
    authorization: 'Bearer secret',
    'x-custom': 'kept',
    'impersonate-user': 'x',
    'x-remote-user': 'mallory',
    'x-plat-tls-client-identity': 'forged',
  });
  assert.equal(r.status, 200, r.text);
  const seen = r.json;
  assert.deepEqual([seen.method, seen.path, seen.query, seen.body], ['POST', '/echo', '?x=1&y=2', 'payload']);
  assert.equal(seen.headers.authorization, undefined, "the caller's credentials are not forwarded");
  assert.equal(seen.headers['x-custom'], 'kept');
  assert.deepEqual(
    ['impersonate-user', 'x-remote-user', 'x-plat-tls-client-identity'].filter((h) => h in seen.headers),
    [],
    'identity headers are not forwarded',
  );
  assert.equal(seen.headers['x-forwarded-uri'], '/api/v1/nodes/n1/proxy/echo');
  assert.equal(seen.headers['x-forwarded-proto'], 'https');
  const call = agent.calls.find((c) => c.path === '/echo?x=1&y=2');
  assert.equal(call?.user, 'plat-apiserver-kubelet-client');
});

test('nodes/N/proxy: a redirect on the agent points back through the proxy path; the bare proxy path is /', async () => {
  const r = await fetch(`${s.url}/api/v1/nodes/n1/proxy/redirect`, { redirect: 'manual' });
  assert.equal(r.status, 302);
  assert.equal(r.headers.get('location'), `https://127.0.0.1:${s.url.split(':')[2]}/api/v1/nodes/n1/proxy/healthz`);
  const root = await request(s.url, 'GET', '/api/v1/nodes/n1/proxy');
  assert.deepEqual([root.status, root.text], [404, '404 page not found\n'], "the agent's own 404 passes through");
  assert.ok(agent.calls.some((c) => c.path === '/'));
});

test('pods/P[:port]/proxy and services/S[:port]/proxy reach the endpoint with the path after proxy', async () => {
  const byFirstPort = await request(s.url, 'GET', `${NS}/pods/web/proxy/a/b/?q=1`);
  assert.equal(byFirstPort.status, 200, byFirstPort.text);
  assert.equal(byFirstPort.headers.get('x-backend'), 'yes');
  assert.deepEqual(
    [byFirstPort.json.url, byFirstPort.json.headers['x-forwarded-uri']],
    ['/a/b/?q=1', `${NS}/pods/web/proxy/a/b/`],
  );
  const byPort = await request(s.url, 'PUT', `${NS}/pods/web:${backendPort}/proxy/put`, { v: 1 });
  assert.deepEqual([byPort.json.method, byPort.json.url, byPort.json.body], ['PUT', '/put', '{"v":1}']);
  const svc = await request(s.url, 'GET', `${NS}/services/web:http/proxy/x`);
  assert.deepEqual([svc.status, svc.json.url], [200, '/x']);
  const svcDefault = await request(s.url, 'GET', `${NS}/services/web/proxy/`);
  assert.equal(svcDefault.status, 503, 'no port name: the unnamed endpoint port, which web does not have');
  const empty = await request(s.url, 'GET', `${NS}/services/empty/proxy/`);
  assert.deepEqual([empty.status, empty.json.message], [503, 'no endpoints available for service "empty"']);
  const missing = await request(s.url, 'GET', `${NS}/services/nope/proxy/`);
  assert.deepEqual([missing.status, missing.json.message], [404, 'services "nope" not found']);
});

test('each connect subresource is authorized as its own resource (get nodes/proxy, get pods/log, create pods/exec)', async () => {
  const bob = { authorization: 'Bearer bob-token' };
  const node = await tlsRequest(s.secureUrl, tls, 'GET', '/api/v1/nodes/n1/proxy/healthz', undefined, bob);
  assert.deepEqual(
    [node.status, node.json.message],
    [403, 'nodes "n1" is forbidden: User "bob" cannot get resource "nodes/proxy" in API group "" at the cluster scope'],
  );
  const log = await tlsRequest(s.secureUrl, tls, 'GET', `${NS}/pods/web/log`, undefined, bob);
  assert.deepEqual(
    [log.status, log.json.message],
    [
      403,
      'pods "web" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "default"',
    ],
  );
  const exec = await tlsRequest(s.secureUrl, tls, 'POST', `${NS}/pods/web/exec?command=ls`, undefined, bob);
  assert.deepEqual(
    [exec.status, exec.json.message],
    [
      403,
      'pods "web" is forbidden: User "bob" cannot create resource "pods/exec" in API group "" in the namespace "default"',
    ],
  );
  assert.ok(!agent.calls.some((c) => c.path.startsWith('/exec/')), 'nothing reached the agent');
});

test('a large followed log through the secure port arrives intact to a slow reader (backpressure, no corruption)', async () => {
  const size = 8 * 1024 * 1024;
  const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f));
  const got = await new Promise<{ n: number; bad: number }>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: s.securePort,
        path: `${NS}/pods/big/log?follow=true&limitBytes=${size}`,
        ca: pki('ca.crt'),
        cert: pki('admin.crt'),
        key: pki('admin.key'),
        timeout: 30_000,
      },
      (res) => {
        let n = 0,
          bad = 0;
        res.on('data', (c: Buffer) => {
          // the agent writes "x\n" repeated: any other byte is corruption
          for (let i = 0; i < c.length; i++) if (c[i] !== ((n + i) % 2 === 0 ? 0x78 : 0x0a)) bad++;
          n += c.length;
          res.pause();
          setImmediate(() => res.resume());
        });
        res.on('end', () => resolve({ n, bad }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
  assert.deepEqual(got, { n: size, bad: 0 });
});

/** A log read over the secure port with the admin certificate (a fresh connection each time). */
function secureLog(path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: s.securePort,
        path,
        ca: pki('ca.crt'),
        cert: pki('admin.crt'),
        key: pki('admin.key'),
        timeout: 10_000,
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test("on the secure port the TLS front streams a followed pods/log itself: the handler's headers, chunked, then the connection closes", async () => {
  const got = await secureLog(`${NS}/pods/big/log?follow=true&limitBytes=16`);
  assert.deepEqual([got.status, got.body], [200, 'x\n'.repeat(8)]);
  assert.deepEqual(
    [got.headers['content-type'], got.headers['transfer-encoding'], got.headers.connection],
    ['text/plain', 'chunked', 'close'],
  );
  assert.match(
    String(got.headers['x-platform-pf-flowschema-uid']),
    /^[0-9a-f-]{36}$/,
    "the filter chain's headers are kept",
  );
  assert.deepEqual(
    Object.keys(got.headers).filter(
      (h) => h.startsWith('x-plat-tls') || h.includes('directive') || h === 'content-length',
    ),
    [],
  );
  const call = agent.calls.find((c) => c.path === '/containerLogs/default/big/blast?follow=true&limitBytes=16');
  assert.deepEqual(call && [call.path, call.user], [
    '/containerLogs/default/big/blast?follow=true&limitBytes=16',
    'plat-apiserver-kubelet-client',
  ]);
  assert.deepEqual(
    Object.keys(call!.headers).filter((h) => h.startsWith('x-plat') || h === 'authorization'),
    [],
  );
});

test("a bounded pods/log on the secure port goes through the kubelet client's pool: sequential logs share one agent connection", async () => {
  agent.logs.set('default/web/c', ['first', 'second']);
  const first = await secureLog(`${NS}/pods/web/log?timestamps=false`);
  assert.deepEqual([first.status, first.body, first.headers['content-type']], [200, 'first\nsecond\n', 'text/plain']);
  const connections = agent.connections;
  const second = await secureLog(`${NS}/pods/web/log?tailLines=1`);
  assert.deepEqual([second.status, second.body], [200, 'second\n']);
  assert.equal(agent.connections, connections, 'the second log reused the agent connection of the first');
  const calls = agent.calls.filter((c) => c.path.startsWith('/containerLogs/default/web/c'));
  assert.deepEqual(
    calls.map((c) => [c.path, c.user]),
    [
      ['/containerLogs/default/web/c', 'plat-apiserver-kubelet-client'],
      ['/containerLogs/default/web/c?tailLines=1', 'plat-apiserver-kubelet-client'],
    ],
  );
  assert.deepEqual(
    calls.flatMap((c) => Object.keys(c.headers).filter((h) => h.startsWith('x-plat') || h === 'authorization')),
    [],
  );
});

test('an upgrade on the plain port is refused (only the TLS front can take it over) and reveals nothing internal', async () => {
  const { status, headers, body } = await new Promise<{
    status: number;
    headers: Record<string, unknown>;
    body: string;
  }>((resolve, reject) => {
    const req = httpRequest(
      `${s.url}${NS}/pods/web/exec?command=ls&stdout=true`,
      {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-protocol': 'v5.channel.k8s.io',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('upgrade', () => reject(new Error('upgraded on the plain port')));
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 400, body);
  assert.equal(
    JSON.parse(body).message,
    "streaming upgrades are served by the secure port's TLS front only (client certificates enabled)",
  );
  assert.ok(!Object.keys(headers).some((h) => h.includes('directive')), JSON.stringify(headers));
  const plainPost = await request(s.url, 'POST', `${NS}/pods/web/exec?command=ls&stdout=true`);
  assert.deepEqual(
    [plainPost.status, plainPost.json.message],
    [400, 'Upgrade request required'],
    'upstream: exec without an upgrade',
  );
});
