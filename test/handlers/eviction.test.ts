import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const PDBS = (ns: string) => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
const evict = (ns: string, name: string, deleteOptions?: object) =>
  request(s.url, 'POST', `${PODS(ns)}/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: ns },
    ...(deleteOptions ? { deleteOptions } : {}),
  });
const exists = async (ns: string, name: string) => (await request(s.url, 'GET', `${PODS(ns)}/${name}`)).status === 200;

async function ns(name: string) {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
}

async function pod(
  n: string,
  name: string,
  labels: Record<string, string>,
  phase = 'Running',
  ready = true,
  nodeName?: string,
) {
  const c = await request(s.url, 'POST', PODS(n), {
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(nodeName ? { nodeName } : {}) },
  });
  assert.equal(c.status, 201, c.text);
  const got = c.json;
  got.status = { ...got.status, phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  assert.equal((await request(s.url, 'PUT', `${PODS(n)}/${name}/status`, got)).status, 200);
}

async function pdb(n: string, name: string, spec: object, want: Record<string, number>) {
  const c = await request(s.url, 'POST', PDBS(n), { metadata: { name }, spec });
  assert.equal(c.status, 201, c.text);
  return budget(n, name, want);
}

async function budget(n: string, name: string, want: Record<string, number>) {
  return until(
    async () => {
      const st = (await request(s.url, 'GET', `${PDBS(n)}/${name}`)).json?.status ?? {};
      return Object.entries(want).every(([k, v]) => st[k] === v) ? st : undefined;
    },
    `${name} status ${JSON.stringify(want)}`,
  );
}

test('no budget: the pod is deleted and the reply is 201 Success', async () => {
  await ns('ev-none');
  await pod('ev-none', 'p', { app: 'x' });
  const r = await evict('ev-none', 'p');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual([r.json.kind, r.json.status, r.json.code], ['Status', 'Success', 201]);
  assert.equal(await exists('ev-none', 'p'), false);
});

test('missing pod: 404; mismatched name: 400', async () => {
  await ns('ev-404');
  const r = await evict('ev-404', 'nope');
  assert.equal(r.status, 404);
  assert.equal(r.json.reason, 'NotFound');
  assert.equal(r.json.message, 'pods "nope" not found');
  await pod('ev-404', 'p', {});
  const b = await request(s.url, 'POST', `${PODS('ev-404')}/p/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'q' },
  });
  assert.equal(b.status, 400);
});

test('deleteOptions are honoured: a bound pod evicted with gracePeriodSeconds 0 goes at once, without it waits', async () => {
  await ns('ev-opts');
  await pod('ev-opts', 'slow', {}, 'Running', true, 'node-1');
  await pod('ev-opts', 'fast', {}, 'Running', true, 'node-1');
  assert.equal((await evict('ev-opts', 'slow')).status, 201);
  const slow = (await request(s.url, 'GET', `${PODS('ev-opts')}/slow`)).json;
  assert.equal(slow.metadata.deletionGracePeriodSeconds, 30);
  assert.equal((await evict('ev-opts', 'fast', { gracePeriodSeconds: 0 })).status, 201);
  assert.equal(await exists('ev-opts', 'fast'), false);
  const stale = await evict('ev-opts', 'slow', { preconditions: { uid: 'not-the-uid' } });
  assert.equal(stale.status, 409);
});

test('a budget allowing one disruption: the first eviction spends it, the second gets 429', async () => {
  await ns('ev-pdb');
  for (const n of ['a', 'b', 'c']) await pod('ev-pdb', n, { app: 'web' });
  await pdb(
    'ev-pdb',
    'web',
    { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    { currentHealthy: 3, disruptionsAllowed: 1 },
  );
  const first = await evict('ev-pdb', 'a');
  assert.equal(first.status, 201, first.text);
  assert.equal(await exists('ev-pdb', 'a'), false);
  assert.equal((await request(s.url, 'GET', `${PDBS('ev-pdb')}/web`)).json.status.disruptionsAllowed, 0);
  await budget('ev-pdb', 'web', { currentHealthy: 2, disruptionsAllowed: 0 });
  const second = await evict('ev-pdb', 'b');
  assert.equal(second.status, 429, second.text);
  assert.equal(second.json.reason, 'TooManyRequests');
  assert.equal(second.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual(second.json.details.causes, [
    { reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' },
  ]);
  assert.equal(await exists('ev-pdb', 'b'), true);
});

test('the decrement is recorded in disruptedPods while the evicted pod is still terminating', async () => {
  await ns('ev-dis');
  for (const n of ['a', 'b']) await pod('ev-dis', n, { app: 'web' }, 'Running', true, 'node-1');
  await pdb(
    'ev-dis',
    'web',
    { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
    { currentHealthy: 2, disruptionsAllowed: 1 },
  );
  const dry = await request(s.url, 'POST', `${PODS('ev-dis')}/a/eviction?dryRun=All`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'a' },
  });
  assert.equal(dry.status, 201);
  assert.equal((await request(s.url, 'GET', `${PODS('ev-dis')}/a`)).json.metadata.deletionTimestamp, undefined);
  assert.equal((await request(s.url, 'GET', `${PDBS('ev-dis')}/web`)).json.status.disruptionsAllowed, 1);
  assert.equal((await evict('ev-dis', 'a')).status, 201);
  const st = (await request(s.url, 'GET', `${PDBS('ev-dis')}/web`)).json.status;
  assert.equal(st.disruptionsAllowed, 0);
  assert.ok(st.disruptedPods?.a || st.currentHealthy === 1, JSON.stringify(st));
  assert.equal((await request(s.url, 'GET', `${PDBS('ev-dis')}/web`)).json.status.conditions[0].status, 'False');
  // the controller sees the pod deleting: it drops the record and counts 1 healthy of 1 desired
  const settled = await until(async () => {
    const st = (await request(s.url, 'GET', `${PDBS('ev-dis')}/web`)).json?.status ?? {};
    return st.currentHealthy === 1 &&
      st.desiredHealthy === 1 &&
      st.disruptionsAllowed === 0 &&
      st.disruptedPods === undefined
      ? st
      : undefined;
  }, 'the budget settles without the disrupted pod');
  assert.equal(settled.disruptedPods, undefined);
  assert.equal((await evict('ev-dis', 'b')).status, 429);
});

test('pods not Running ignore budgets; an unready pod goes when the budget is healthy', async () => {
  await ns('ev-phase');
  await pod('ev-phase', 'a', { app: 'web' });
  await pod('ev-phase', 'done', { app: 'web' }, 'Succeeded', false);
  await pod('ev-phase', 'new', { app: 'web' }, 'Pending', false);
  await pod('ev-phase', 'unready', { app: 'web' }, 'Running', false);
  await pdb(
    'ev-phase',
    'web',
    { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
    { currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0 },
  );
  assert.equal((await evict('ev-phase', 'done')).status, 201);
  assert.equal((await evict('ev-phase', 'new')).status, 201);
  assert.equal((await evict('ev-phase', 'unready')).status, 201);
  assert.equal((await evict('ev-phase', 'a')).status, 429);
  assert.deepEqual(
    [
      await exists('ev-phase', 'done'),
      await exists('ev-phase', 'new'),
      await exists('ev-phase', 'unready'),
      await exists('ev-phase', 'a'),
    ],
    [false, false, false, true],
  );
});

test('two matching budgets: 500 as upstream; an empty selector matches no pod for eviction', async () => {
  await ns('ev-two');
  await pod('ev-two', 'a', { app: 'web' });
  await pdb('ev-two', 'one', { minAvailable: 0, selector: { matchLabels: { app: 'web' } } }, { disruptionsAllowed: 1 });
  await pdb(
    'ev-two',
    'two',
    { maxUnavailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } },
    { disruptionsAllowed: 1 },
  );
  await pdb('ev-two', 'all', { minAvailable: 1, selector: {} }, { disruptionsAllowed: 0 });
  const r = await evict('ev-two', 'a');
  assert.equal(r.status, 500);
  assert.equal(
    r.json.message,
    'Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
  );
  assert.equal(await exists('ev-two', 'a'), true);
  assert.equal((await request(s.url, 'DELETE', `${PDBS('ev-two')}/two`)).status, 200);
  assert.equal((await evict('ev-two', 'a')).status, 201);
});
