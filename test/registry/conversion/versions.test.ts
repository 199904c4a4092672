/**
 * Every served version at once: a HorizontalPodAutoscaler is stored once (autoscaling/v2) and
 * read, listed, watched, updated and patched through v1 and v2, losslessly.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { openWatch, type WatchEvent } from '../../helpers/watch.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const qps = { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };
const cpu = (n: number) => ({
  type: 'Resource',
  resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } },
});

/** An HPA created through v2 (each test makes the ones it reads: it runs alone too). */
async function createV2(name: string, metrics: unknown[]): Promise<void> {
  const body = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics },
  };
  const r = await request(s.url, 'POST', V2, body);
  assert.equal(r.status, 201, r.text);
}

test('created through v2, read through v1 (CPU target in v1 fields) and v2 (unchanged)', async () => {
  const body = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'a' },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics: [qps, cpu(70)] },
  };
  assert.equal((await request(s.url, 'POST', V2, body)).status, 201);
  const v1 = await request(s.url, 'GET', `${V1}/a`);
  assert.equal(v1.status, 200);
  assert.equal(v1.json.apiVersion, 'autoscaling/v1');
  assert.equal(v1.json.spec.targetCPUUtilizationPercentage, 70);
  assert.equal(v1.json.spec.metrics, undefined);
  assert.ok(v1.json.metadata.annotations['autoscaling.alpha.plat.io/metrics']);
  const v2 = await request(s.url, 'GET', `${V2}/a`);
  assert.deepEqual(v2.json.spec.metrics, [qps, cpu(70)]);
  assert.equal(v2.json.metadata.annotations, undefined, 'no conversion annotations in the storage version');
  const list = await request(s.url, 'GET', V1);
  assert.equal(list.json.apiVersion, 'autoscaling/v1');
  assert.equal(list.json.items[0].spec.targetCPUUtilizationPercentage, 70);
});

test("a v1 client's read-modify-write keeps the v2-only fields (round trip through annotations)", async () => {
  await createV2('rmw', [qps, cpu(70)]);
  const v1 = (await request(s.url, 'GET', `${V1}/rmw`)).json;
  v1.spec.maxReplicas = 9;
  v1.spec.targetCPUUtilizationPercentage = 50;
  const put = await request(s.url, 'PUT', `${V1}/rmw`, v1);
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.apiVersion, 'autoscaling/v1');
  const v2 = (await request(s.url, 'GET', `${V2}/rmw`)).json;
  assert.equal(v2.spec.maxReplicas, 9);
  assert.deepEqual(v2.spec.metrics, [qps, cpu(50)], 'the Pods metric survived the v1 update');
});

test('created through v1, patched through v1, read through v2', async () => {
  const body = {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'b' },
    spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 40 },
  };
  const created = await request(s.url, 'POST', V1, body);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.spec.targetCPUUtilizationPercentage, 40);
  const patched = await request(
    s.url,
    'PATCH',
    `${V1}/b`,
    { spec: { targetCPUUtilizationPercentage: 45 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.spec.targetCPUUtilizationPercentage, 45);
  const v2 = (await request(s.url, 'GET', `${V2}/b`)).json;
  assert.deepEqual(v2.spec.metrics, [cpu(45)]);
  assert.equal(v2.apiVersion, 'autoscaling/v2');
});

test('watchers of each version get converted events (live and replayed)', async () => {
  await createV2('replayed', [qps, cpu(50)]);
  const w1 = await openWatch(s.url, `${V1}?watch=1&resourceVersion=0`);
  const w2 = await openWatch(s.url, `${V2}?watch=1&resourceVersion=0`);
  try {
    const body = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'c' },
      spec: { scaleTargetRef: ref, maxReplicas: 4, metrics: [cpu(65)] },
    };
    assert.equal((await request(s.url, 'POST', V2, body)).status, 201);
    const isC = (evs: WatchEvent[]) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'c');
    await w1.waitFor(isC, 'ADDED c (v1)');
    await w2.waitFor(isC, 'ADDED c (v2)');
    const e1 = w1.events.find((e) => e.object.metadata.name === 'c')!;
    const e2 = w2.events.find((e) => e.object.metadata.name === 'c')!;
    assert.equal(e1.object.apiVersion, 'autoscaling/v1');
    assert.equal(e1.object.spec.targetCPUUtilizationPercentage, 65);
    assert.equal(e2.object.apiVersion, 'autoscaling/v2');
    assert.deepEqual(e2.object.spec.metrics, [cpu(65)]);
    // the synthetic ADDED of the initial state are converted too
    const a1 = w1.events.find((e) => e.object.metadata.name === 'replayed')!;
    assert.equal(a1.object.apiVersion, 'autoscaling/v1');
    assert.equal(a1.object.spec.targetCPUUtilizationPercentage, 50);
  } finally {
    w1.close();
    w2.close();
  }
});
