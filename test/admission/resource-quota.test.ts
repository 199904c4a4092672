/** The ResourceQuota plugin and controller: counts, compute resources, refusals, status.used. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--disable-admission-plugins', 'ServiceAccount']);
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'rq' } })).status, 201);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const pod = (name: string, cpu?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'x',
        ...(cpu ? { resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } } } : {}),
      },
    ],
  },
});

async function until(what: string, f: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < 500 && Date.now() < deadline; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('object counts and compute resources are enforced on create; status.used follows', async () => {
  const q = await request(s.url, 'POST', '/api/v1/namespaces/rq/resourcequotas', {
    metadata: { name: 'q' },
    spec: { hard: { pods: '2', 'requests.cpu': '1', 'count/configmaps': '1' } },
  });
  assert.equal(q.status, 201, q.text);
  const bare = await request(s.url, 'POST', '/api/v1/namespaces/rq/pods', pod('p0'));
  assert.equal(bare.status, 403);
  assert.equal(bare.json.message, 'pods "p0" is forbidden: failed quota: q: must specify requests.cpu');
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces/rq/pods', pod('p1', '400m'))).status, 201);
  const cpu = await request(s.url, 'POST', '/api/v1/namespaces/rq/pods', pod('p2', '700m'));
  assert.equal(cpu.status, 403);
  assert.equal(cpu.json.reason, 'Forbidden');
  assert.equal(
    cpu.json.message,
    'pods "p2" is forbidden: exceeded quota: q, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1',
  );
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces/rq/pods', pod('p3', '500m'))).status, 201);
  const count = await request(s.url, 'POST', '/api/v1/namespaces/rq/pods', pod('p4', '10m'));
  assert.equal(
    count.json.message,
    'pods "p4" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
  );
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/rq/configmaps', { metadata: { name: 'c1' } })).status,
    201,
  );
  const cm = await request(s.url, 'POST', '/api/v1/namespaces/rq/configmaps', { metadata: { name: 'c2' } });
  assert.equal(
    cm.json.message,
    'configmaps "c2" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1',
  );
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'rq-other' } })).status,
    201,
    'other namespaces',
  );
  await until('status.used', async () => {
    const st = (await request(s.url, 'GET', '/api/v1/namespaces/rq/resourcequotas/q')).json.status;
    return JSON.stringify(st?.used) === JSON.stringify({ 'count/configmaps': '1', pods: '2', 'requests.cpu': '900m' });
  });
  assert.equal((await request(s.url, 'DELETE', '/api/v1/namespaces/rq/pods/p3?gracePeriodSeconds=0')).status, 200);
  await until(
    'usage released',
    async () =>
      (await request(s.url, 'POST', '/api/v1/namespaces/rq/pods?dryRun=All', pod('p5', '500m'))).status === 201,
  );
});
