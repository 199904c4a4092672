/**
 * ResourceQuota over Pods whose JSON the front thread does not hold: after a restart the front's
 * read cache loads every Pod from its actor without JSON (actors/read-cache.ts), only the quota
 * summary the actor computed (actors/pod-quota.ts). The controller's status.used and admission's
 * refusals answer as before the restart (requests and limits, a finished Pod, count/pods), and a
 * GET of a Pod (now answered by its actor) returns the same bytes as before.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

const ARGS = ['--disable-admission-plugins', 'ServiceAccount'];
const NS = '/api/v1/namespaces/rqr';
let s: TestServer | undefined;
after(async () => {
  await s?.stop();
  s?.cleanup();
});

const pod = (name: string, cpu: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    containers: [
      { name: 'a', image: 'x', resources: { requests: { cpu, memory: '64Mi' }, limits: { memory: '64Mi' } } },
      { name: 'b', image: 'x', resources: { requests: { cpu: '50m' }, limits: { memory: '32Mi' } } },
    ],
  },
});

async function until(what: string, f: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const used = async (server: TestServer) =>
  (await request(server.url, 'GET', `${NS}/resourcequotas/q`)).json.status?.used;
const usedIs = (server: TestServer, want: Record<string, string>) =>
  until(`status.used ${JSON.stringify(want)}`, async () => JSON.stringify(await used(server)) === JSON.stringify(want));

test('quota usage and refusals, and Pod GETs, are the same after a restart (the front holds no Pod JSON)', async () => {
  s = await startServer(ARGS);
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'rqr' } })).status, 201);
  const q = await request(s.url, 'POST', `${NS}/resourcequotas`, {
    metadata: { name: 'q' },
    spec: { hard: { pods: '3', 'count/pods': '3', 'requests.cpu': '1', 'limits.memory': '1Gi' } },
  });
  assert.equal(q.status, 201, q.text);
  for (const [name, cpu] of [
    ['p1', '300m'],
    ['p2', '250m'],
    ['done', '250m'],
  ] as const)
    assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod(name, cpu))).status, 201, name);
  const phase = await request(
    s.url,
    'PATCH',
    `${NS}/pods/done/status`,
    { status: { phase: 'Succeeded' } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.equal(phase.status, 200, phase.text);
  // p1 and p2 count (the Succeeded Pod does not): cpu 300m+50m + 250m+50m, memory 2 × 96Mi
  const before = { 'count/pods': '2', 'limits.memory': '192Mi', pods: '2', 'requests.cpu': '650m' };
  await usedIs(s, before);
  const gets = ['p1', 'p2', 'done'].map((n) => `${NS}/pods/${n}`);
  const bodies = await Promise.all(gets.map(async (p) => (await request(s!.url, 'GET', p)).text));

  await s.stop();
  s = await startServer(ARGS, s.dataDir);
  for (const [i, p] of gets.entries()) {
    const r = await request(s.url, 'GET', p);
    assert.equal(r.status, 200);
    assert.equal(r.text, bodies[i], `${p}: the same bytes from the actor`);
  }
  await usedIs(s, before);
  const cpu = await request(s.url, 'POST', `${NS}/pods`, pod('big', '350m'));
  assert.equal(cpu.status, 403);
  assert.equal(
    cpu.json.message,
    'pods "big" is forbidden: exceeded quota: q, requested: requests.cpu=400m, used: requests.cpu=650m, limited: requests.cpu=1',
  );
  assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod('p3', '100m'))).status, 201);
  const count = await request(s.url, 'POST', `${NS}/pods`, pod('p4', '1m'));
  assert.equal(count.status, 403);
  assert.equal(
    count.json.message,
    'pods "p4" is forbidden: exceeded quota: q, requested: count/pods=1,pods=1, used: count/pods=3,pods=3, limited: count/pods=3,pods=3',
  );
  assert.equal((await request(s.url, 'DELETE', `${NS}/pods/p1`)).status, 200);
  await usedIs(s, { 'count/pods': '2', 'limits.memory': '192Mi', pods: '2', 'requests.cpu': '450m' });
});
