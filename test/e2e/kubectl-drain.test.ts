/**
 * kubectl v1.32 cordon, uncordon and drain against the server. There is no node agent, so a
 * pod bound to a node stays terminating for its grace period after eviction (as upstream
 * without a kubelet); the drains here pass --grace-period=0 so evicted pods go at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const k = kubectlWithServer('drain', [], 60_000);
const { kubectl, ok } = k;

const PODS = '/api/v1/namespaces/default/pods';
const PDB = '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web';

async function runningPod(name: string, node: string) {
  const c = await request(k.url, 'POST', PODS, {
    metadata: { name, labels: { app: 'web' } },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'nginx' }] },
  });
  assert.equal(c.status, 201, c.text);
  c.json.status = { ...c.json.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  assert.equal((await request(k.url, 'PUT', `${PODS}/${name}/status`, c.json)).status, 200);
}

const podNames = async () =>
  ((await request(k.url, 'GET', `${PODS}?fieldSelector=spec.nodeName=node-1`)).json.items as any[])
    .map((p) => p.metadata.name)
    .sort();
const budget = (want: number) =>
  until(async () => {
    const st = (await request(k.url, 'GET', PDB)).json?.status;
    return st?.disruptionsAllowed === want ? st : undefined;
  }, `disruptionsAllowed ${want}`);

test('cordon sets spec.unschedulable, uncordon clears it', async () => {
  assert.equal((await request(k.url, 'POST', '/api/v1/nodes', { metadata: { name: 'node-0' } })).status, 201);
  assert.match(await ok('cordon', 'node-0'), /node\/node-0 cordoned/);
  assert.equal((await request(k.url, 'GET', '/api/v1/nodes/node-0')).json.spec.unschedulable, true);
  assert.match(await ok('uncordon', 'node-0'), /node\/node-0 uncordoned/);
  assert.equal((await request(k.url, 'GET', '/api/v1/nodes/node-0')).json.spec.unschedulable, undefined);
});

test('drain: blocked while the budget forbids, completes once it allows', async () => {
  assert.equal((await request(k.url, 'POST', '/api/v1/nodes', { metadata: { name: 'node-1' } })).status, 201);
  for (const n of ['web-1', 'web-2']) await runningPod(n, 'node-1');
  const c = await request(k.url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    metadata: { name: 'web' },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  assert.equal(c.status, 201, c.text);
  await budget(0);

  const blocked = await kubectl(
    'drain',
    'node-1',
    '--ignore-daemonsets',
    '--force',
    '--grace-period=0',
    '--timeout=6s',
  );
  assert.notEqual(blocked.code, 0, blocked.stdout);
  assert.match(blocked.stderr + blocked.stdout, /Cannot evict pod as it would violate the pod's disruption budget/);
  assert.deepEqual(await podNames(), ['web-1', 'web-2']);
  assert.equal(
    (await request(k.url, 'GET', '/api/v1/nodes/node-1')).json.spec.unschedulable,
    true,
    'drain cordons first',
  );

  // relax the budget: both pods may go, one at a time
  const pdb = (await request(k.url, 'GET', PDB)).json;
  pdb.spec.minAvailable = 0;
  assert.equal((await request(k.url, 'PUT', PDB, pdb)).status, 200);
  await budget(2);
  const out = await ok('drain', 'node-1', '--ignore-daemonsets', '--force', '--grace-period=0', '--timeout=20s');
  assert.match(out, /pod\/web-1 evicted/);
  assert.match(out, /node\/node-1 drained/);
  assert.deepEqual(await podNames(), []);
});
