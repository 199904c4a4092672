/**
 * The kubelet client's connection pool (src/kubelet/client.ts): sequential requests to one
 * node agent share one TLS connection, and a request that finds its pooled connection closed
 * by the agent is sent again on a new one (Go's transport), unless it has a body.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKubeletClientCertificate, ensureServingCertificate } from '../../src/auth/pki.js';
import { KubeletClient, type KubeletRequest } from '../../src/kubelet/client.js';
import { startFakeKubelet, type FakeKubelet } from '../helpers/fake-kubelet.js';

let dir = '';
let agent: FakeKubelet;
let client: KubeletClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plat-kubelet-client-'));
  const serving = ensureServingCertificate({
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    certDir: dir,
    bindAddress: '127.0.0.1',
  });
  const kc = ensureKubeletClientCertificate(serving, dir, 'plat-apiserver-kubelet-client')!;
  const read = (f: string) => readFileSync(f);
  agent = await startFakeKubelet({
    cert: read(serving.certFile),
    key: read(serving.keyFile),
    ca: read(serving.caFile!),
  });
  client = new KubeletClient({ cert: read(kc.certFile), key: read(kc.keyFile) }, 5_000);
});

after(async () => {
  client?.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One request to the agent: its status and body, or the error message. */
function call(r: KubeletRequest, body?: Buffer): Promise<{ code: number; text: string } | { error: string }> {
  return new Promise((resolve) => {
    client
      .send({ host: '127.0.0.1', port: agent.port }, r, {
        response: (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c;
          });
          res.on('end', () => resolve({ code: res.statusCode ?? 0, text }));
        },
        error: (e) => resolve({ error: e.message }),
      })
      .end(body);
  });
}

test('sequential requests to one node agent reuse one TLS connection (logs, proxy paths, healthz)', async () => {
  const before = agent.connections;
  agent.logs.set('ns/p/c', ['a line']);
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  assert.deepEqual(await call({ method: 'GET', path: '/containerLogs/ns/p/c' }), { code: 200, text: 'a line\n' });
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  const failed = await call({ method: 'GET', path: '/nowhere' });
  assert.deepEqual(failed, { code: 404, text: '404 page not found\n' });
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  assert.equal(agent.connections - before, 1, 'one handshake for five requests');
});

test('a GET whose pooled connection the agent closed is sent again on a new connection', async () => {
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  const before = agent.connections;
  agent.dropReused = 1;
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  assert.equal(agent.dropReused, 0, 'the pooled connection was tried first');
  assert.equal(agent.connections - before, 1, 'then one new connection');
});

test('a request with a body is not replayed: the closed connection is its error', async () => {
  assert.deepEqual(await call({ method: 'GET', path: '/healthz' }), { code: 200, text: 'ok' });
  agent.dropReused = 1;
  const r = await call({ method: 'POST', path: '/echo', headers: { 'content-length': '2' } }, Buffer.from('{}'));
  agent.dropReused = 0;
  assert.deepEqual(r, {
    error: `Post "https://127.0.0.1:${agent.port}/echo": read tcp 127.0.0.1:${agent.port}: read: connection reset by peer`,
  });
});
