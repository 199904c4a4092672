import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('the platform Service in default holds the first address of the service range', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces/default/services/platform');
  assert.equal(r.status, 200);
  assert.equal(r.json.spec.clusterIP, '10.0.0.1');
  assert.equal(r.json.spec.ports[0].port, 443);
});

test('bootstrap is idempotent across restarts', async () => {
  const before = (await request(s.url, 'GET', '/api/v1/namespaces/default/services/platform')).json.metadata.uid;
  await s.stop();
  // the restarted server serves the tests after this one too (after() stops it)
  s = await startServer([], s.dataDir);
  const r = await request(s.url, 'GET', '/api/v1/namespaces/default/services/platform');
  assert.equal(r.json.metadata.uid, before);
});

test('POST to exec with an empty body answers at once with a Status (no node assigned)', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces/default/pods', {
    metadata: { name: 'px' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  const r = await fetch(`${s.url}/api/v1/namespaces/default/pods/px/exec?command=ls&stdout=true`, { method: 'POST' });
  assert.equal(r.status, 400);
  const body = (await r.json()) as any;
  assert.equal(body.kind, 'Status');
  assert.match(body.message, /does not have a host assigned/);
});
