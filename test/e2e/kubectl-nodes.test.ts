/**
 * kubectl v1.32 `get nodes` against node heartbeats: a node agent renewing its Lease stays
 * Ready, a silent one turns NotReady (Ready=Unknown, unreachable taints), one that never posted
 * status shows Unknown, Ready=False shows NotReady; names as upstream under --api-domain k8s.io.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const k = kubectlWithServer(
  'nodes',
  ['--api-domain', 'k8s.io', '--node-monitor-grace-period', '1500ms', '--node-startup-grace-period', '1h'],
  60_000,
);
const { ok } = k;

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
const microTime = () => new Date().toISOString().replace('Z', '000Z');

async function node(name: string, ready?: 'True' | 'False'): Promise<void> {
  const c = await request(k.url, 'POST', '/api/v1/nodes', { metadata: { name } });
  assert.equal(c.status, 201, c.text);
  if (!ready) return;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = {
    conditions: [
      {
        type: 'Ready',
        status: ready,
        reason: 'KubeletReady',
        message: '',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    nodeInfo: { kubeletVersion: 'v1.32.0' },
  };
  const u = await request(k.url, 'PUT', `/api/v1/nodes/${name}/status`, { ...c.json, status });
  assert.equal(u.status, 200, u.text);
  const l = await request(k.url, 'POST', LEASES, {
    metadata: { name },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() },
  });
  assert.equal(l.status, 201, l.text);
}

function statuses(out: string): Record<string, string> {
  const rows = out.trim().split('\n');
  assert.match(rows[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
  return Object.fromEntries(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 2) as [string, string]));
}

test('kubectl get nodes: Ready while the lease is renewed, NotReady once it is not, Unknown without status', async () => {
  await node('alive', 'True');
  await node('down', 'True');
  await node('sick', 'False');
  await node('fresh');
  // the simulated node agents of "alive" and "sick" renew their leases until the test ends (bounded in count and time)
  let renewing = true;
  const agent = (async () => {
    for (let i = 0; i < 300 && renewing; i++) {
      for (const name of ['alive', 'sick']) {
        const r = await request(
          k.url,
          'PATCH',
          `${LEASES}/${name}`,
          { spec: { renewTime: microTime() } },
          { 'content-type': 'application/merge-patch+json' },
        );
        assert.equal(r.status, 200, r.text);
      }
      await new Promise((res) => setTimeout(res, 200));
    }
  })();
  try {
    const down = await until(async () => {
      const n = (await request(k.url, 'GET', '/api/v1/nodes/down')).json;
      return n.status.conditions.find((c: any) => c.type === 'Ready').status === 'Unknown' &&
        n.spec?.taints?.length === 2
        ? n
        : undefined;
    }, 'down: Ready=Unknown and tainted');
    assert.deepEqual(down.spec.taints.map((t: any) => `${t.key}:${t.effect}`).sort(), [
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unreachable:NoSchedule',
    ]);

    assert.deepEqual(statuses(await ok('get', 'nodes')), {
      alive: 'Ready',
      down: 'NotReady',
      fresh: 'Unknown',
      sick: 'NotReady',
    });
    const taints = await ok('get', 'node', 'sick', '-o', 'jsonpath={.spec.taints[*].key}');
    assert.deepEqual(taints.split(' ').sort(), ['node.kubernetes.io/not-ready', 'node.kubernetes.io/not-ready']);

    await ok('cordon', 'alive');
    assert.equal(statuses(await ok('get', 'nodes'))['alive'], 'Ready,SchedulingDisabled');
    const alive = await until(async () => {
      const n = (await request(k.url, 'GET', '/api/v1/nodes/alive')).json;
      return n.spec?.taints?.length ? n : undefined;
    }, 'alive: unschedulable taint');
    assert.deepEqual(
      alive.spec.taints.map((t: any) => `${t.key}:${t.effect}`),
      ['node.kubernetes.io/unschedulable:NoSchedule'],
    );
    assert.match(await ok('describe', 'node', 'down'), /node\.kubernetes\.io\/unreachable:NoExecute/);
    const leases = (await ok('get', 'leases', '-n', 'kube-node-lease')).trim().split('\n');
    assert.match(leases[0]!, /^NAME\s+HOLDER\s+AGE/);
    assert.deepEqual(
      leases
        .slice(1)
        .map((l) => l.split(/\s+/).slice(0, 2))
        .sort(),
      [
        ['alive', 'alive'],
        ['down', 'down'],
        ['sick', 'sick'],
      ],
    );
  } finally {
    renewing = false;
    await agent;
  }
});
