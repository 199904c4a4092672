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

/** Creates a pod and sets its status through /status (Running and Ready unless told otherwise). */
async function pod(ns: string, name: string, labels: Record<string, string>, ready = true, phase = 'Running') {
  const c = await request(s.url, 'POST', PODS(ns), {
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  assert.equal(c.status, 201, c.text);
  await setStatus(ns, name, ready, phase);
}

async function setStatus(ns: string, name: string, ready: boolean, phase = 'Running') {
  const got = (await request(s.url, 'GET', `${PODS(ns)}/${name}`)).json;
  got.status = { ...got.status, phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  const u = await request(s.url, 'PUT', `${PODS(ns)}/${name}/status`, got);
  assert.equal(u.status, 200, u.text);
}

/** Waits until the budget's status has the given counters, returns it. */
async function statusOf(ns: string, name: string, want: Record<string, number>) {
  return until(
    async () => {
      const st = (await request(s.url, 'GET', `${PDBS(ns)}/${name}`)).json?.status ?? {};
      return Object.entries(want).every(([k, v]) => st[k] === v) ? st : undefined;
    },
    `${name} status ${JSON.stringify(want)}`,
  );
}

async function ns(name: string) {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
}

test('minAvailable int: counts matching healthy pods; condition and observedGeneration follow', async () => {
  await ns('dc-int');
  for (const n of ['a', 'b', 'c']) await pod('dc-int', n, { app: 'web' });
  await pod('dc-int', 'other', { app: 'db' });
  await pod('dc-int', 'pending', { app: 'web' }, false, 'Pending');
  const c = await request(s.url, 'POST', PDBS('dc-int'), {
    metadata: { name: 'web' },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  assert.equal(c.status, 201, c.text);
  const st = await statusOf('dc-int', 'web', {
    expectedPods: 4,
    currentHealthy: 3,
    desiredHealthy: 2,
    disruptionsAllowed: 1,
    observedGeneration: 1,
  });
  assert.equal(st.conditions.length, 1);
  assert.deepEqual(
    [st.conditions[0].type, st.conditions[0].status, st.conditions[0].reason],
    ['DisruptionAllowed', 'True', 'SufficientPods'],
  );
  assert.match(st.conditions[0].lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  // a pod losing readiness: no disruption allowed any more
  await setStatus('dc-int', 'a', false);
  const low = await statusOf('dc-int', 'web', { currentHealthy: 2, disruptionsAllowed: 0 });
  assert.deepEqual([low.conditions[0].status, low.conditions[0].reason], ['False', 'InsufficientPods']);

  // a deleting pod is not healthy (bound pods wait for their node agent; this one is unbound so it goes)
  await setStatus('dc-int', 'a', true);
  await statusOf('dc-int', 'web', { currentHealthy: 3, disruptionsAllowed: 1 });
  assert.equal((await request(s.url, 'DELETE', `${PODS('dc-int')}/b`)).status, 200);
  await statusOf('dc-int', 'web', { expectedPods: 3, currentHealthy: 2, disruptionsAllowed: 0 });

  // a spec change bumps the generation; the controller observes it
  const got = (await request(s.url, 'GET', `${PDBS('dc-int')}/web`)).json;
  got.spec.minAvailable = 1;
  assert.equal((await request(s.url, 'PUT', `${PDBS('dc-int')}/web`, got)).status, 200);
  await statusOf('dc-int', 'web', { observedGeneration: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
});

test('percentages round up: minAvailable 50% and maxUnavailable 50% of 3 pods', async () => {
  await ns('dc-pct');
  for (const n of ['a', 'b', 'c']) await pod('dc-pct', n, { app: 'web' });
  await request(s.url, 'POST', PDBS('dc-pct'), {
    metadata: { name: 'min' },
    spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } } },
  });
  await request(s.url, 'POST', PDBS('dc-pct'), {
    metadata: { name: 'max' },
    spec: { maxUnavailable: '50%', selector: { matchLabels: { app: 'web' } } },
  });
  await request(s.url, 'POST', PDBS('dc-pct'), {
    metadata: { name: 'maxint' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
  });
  await statusOf('dc-pct', 'min', { expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
  await statusOf('dc-pct', 'max', { expectedPods: 3, currentHealthy: 3, desiredHealthy: 1, disruptionsAllowed: 2 });
  await statusOf('dc-pct', 'maxint', { expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
});

test('selectors: {} selects every pod of the namespace, and a pod relabelled out leaves the budget', async () => {
  await ns('dc-sel');
  await pod('dc-sel', 'a', { app: 'web' });
  await pod('dc-sel', 'b', { app: 'db' });
  await request(s.url, 'POST', PDBS('dc-sel'), { metadata: { name: 'all' }, spec: { minAvailable: 0, selector: {} } });
  await request(s.url, 'POST', PDBS('dc-sel'), {
    metadata: { name: 'web' },
    spec: { minAvailable: 0, selector: { matchLabels: { app: 'web' } } },
  });
  await statusOf('dc-sel', 'all', { expectedPods: 2, currentHealthy: 2, disruptionsAllowed: 2 });
  await statusOf('dc-sel', 'web', { expectedPods: 1, disruptionsAllowed: 1 });
  const p = (await request(s.url, 'GET', `${PODS('dc-sel')}/a`)).json;
  p.metadata.labels = { app: 'gone' };
  assert.equal((await request(s.url, 'PUT', `${PODS('dc-sel')}/a`, p)).status, 200);
  await statusOf('dc-sel', 'web', { expectedPods: 0, currentHealthy: 0, disruptionsAllowed: 0 });
});
