import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { kubectlEnv } from '../helpers/kubectl.js';

const run = promisify(execFile);
let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

/** Polls fn until it returns true, bounded by count (no fixed sleeps). */
async function until(fn: () => Promise<boolean>, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('condition not reached');
}

test('system namespaces cannot be deleted', async () => {
  const r = await request(s.url, 'DELETE', '/api/v1/namespaces/default');
  assert.equal(r.status, 403);
  assert.equal(r.json.reason, 'Forbidden');
});

test('deleting a namespace empties it, refuses new content, then removes it', async () => {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } })).status, 201);
  await request(s.url, 'POST', '/api/v1/namespaces/doomed/configmaps', configMap('a'));
  await request(s.url, 'POST', '/api/v1/namespaces/doomed/configmaps', {
    metadata: { name: 'held', finalizers: ['example.com/hold'] },
  });
  await request(s.url, 'POST', '/api/v1/namespaces/doomed/secrets', { metadata: { name: 's' } });
  const d = await request(s.url, 'DELETE', '/api/v1/namespaces/doomed');
  assert.equal(d.status, 200);
  assert.equal(d.json.status.phase, 'Terminating');
  assert.ok(d.json.metadata.deletionTimestamp);
  const c = await request(s.url, 'POST', '/api/v1/namespaces/doomed/configmaps', configMap('late'));
  assert.equal(c.status, 403);
  assert.equal(c.json.reason, 'Forbidden');
  assert.equal(c.json.details.causes[0].reason, 'NamespaceTerminating');
  await until(async () => (await request(s.url, 'GET', '/api/v1/namespaces/doomed/configmaps/a')).status === 404);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/doomed/secrets/s')).status, 404);
  await until(async () =>
    (await request(s.url, 'GET', '/api/v1/namespaces/doomed')).json?.status?.conditions?.some(
      (x: any) => x.type === 'NamespaceContentRemaining',
    ),
  );
  assert.equal(
    (await request(s.url, 'GET', '/api/v1/namespaces/doomed')).status,
    200,
    'held by the finalized configmap',
  );
  const held = (await request(s.url, 'GET', '/api/v1/namespaces/doomed/configmaps/held')).json;
  await request(s.url, 'PUT', '/api/v1/namespaces/doomed/configmaps/held', {
    ...held,
    metadata: { ...held.metadata, finalizers: [] },
  });
  await until(async () => (await request(s.url, 'GET', '/api/v1/namespaces/doomed')).status === 404);
});

test('kubectl delete ns with objects inside completes', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'kdel' } });
  for (let i = 0; i < 5; i++) await request(s.url, 'POST', '/api/v1/namespaces/kdel/configmaps', configMap(`c${i}`));
  const { stdout } = await run('/usr/bin/kubectl', ['--server', s.url, 'delete', 'ns', 'kdel', '--timeout=30s'], {
    env: kubectlEnv(s),
  });
  assert.match(stdout, /namespace "kdel" deleted/);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/kdel')).status, 404);
});
