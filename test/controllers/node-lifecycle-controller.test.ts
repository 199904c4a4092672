import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

let s: TestServer;
const GRACE_MS = 1500;
before(async () => {
  s = await startServer(['--node-monitor-grace-period', '1500ms', '--node-startup-grace-period', '1500ms']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const NODES = '/api/v1/nodes';
const LEASES = '/apis/coordination.plat.io/v1/namespaces/plat-node-lease/leases';
const UNREACHABLE = 'node.platform.io/unreachable';
const NOT_READY = 'node.platform.io/not-ready';

const microTime = (ms = Date.now()) => new Date(ms).toISOString().replace('Z', '000Z');

const getNode = async (name: string) => (await request(s.url, 'GET', `${NODES}/${name}`)).json;
const ready = (node: any) => node.status?.conditions?.find((c: any) => c.type === 'Ready');
const taintKeys = (node: any) => (node.spec?.taints ?? []).map((t: any) => `${t.key}:${t.effect}`).sort();

/** A simulated node agent: registers the Node, posts status, renews its Lease. */
class Kubelet {
  constructor(readonly name: string) {}

  async register(): Promise<void> {
    const c = await request(s.url, 'POST', NODES, { metadata: { name: this.name } });
    assert.equal(c.status, 201, c.text);
    await this.postStatus('True');
    const l = await request(s.url, 'POST', LEASES, {
      metadata: { name: this.name },
      spec: { holderIdentity: this.name, leaseDurationSeconds: 40, renewTime: microTime() },
    });
    assert.equal(l.status, 201, l.text);
  }

  /** PUT nodes/<name>/status with Ready=<status> and a fresh heartbeat (retried on conflict with the controller). */
  async postStatus(status: 'True' | 'False'): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const node = await getNode(this.name);
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      node.status = {
        ...node.status,
        conditions: [
          {
            type: 'Ready',
            status,
            reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
            message: 'kubelet posted',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      };
      const u = await request(s.url, 'PUT', `${NODES}/${this.name}/status`, node);
      if (u.status === 200) return;
      assert.equal(u.status, 409, u.text);
    }
    assert.fail('node status kept conflicting');
  }

  async renew(): Promise<void> {
    const r = await request(
      s.url,
      'PATCH',
      `${LEASES}/${this.name}`,
      { spec: { renewTime: microTime() } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(r.status, 200, r.text);
  }
}

test('a node renewing its lease stays Ready past the grace period; silent, it goes Unknown and unreachable; back, the taints go', async () => {
  const k = new Kubelet('lease-node');
  await k.register();
  // renew for three grace periods (bounded by count and time), checking the node stays Ready
  const end = Date.now() + 3 * GRACE_MS;
  for (let i = 0; i < 200 && Date.now() < end; i++) {
    await k.renew();
    const node = await getNode('lease-node');
    assert.equal(ready(node).status, 'True', 'a renewed lease keeps the node Ready');
    assert.deepEqual(taintKeys(node), []);
    await new Promise((r) => setTimeout(r, 200));
  }

  // the agent stops: after the grace period, Ready is Unknown and the unreachable taints are set
  const lost = await until(async () => {
    const n = await getNode('lease-node');
    return ready(n).status === 'Unknown' && taintKeys(n).length === 2 ? n : undefined;
  }, 'Ready=Unknown with the unreachable taints');
  assert.equal(ready(lost).reason, 'NodeStatusUnknown');
  assert.equal(ready(lost).message, 'Kubelet stopped posting node status.');
  assert.deepEqual(taintKeys(lost), [`${UNREACHABLE}:NoExecute`, `${UNREACHABLE}:NoSchedule`]);
  assert.match(
    lost.spec.taints.find((t: any) => t.effect === 'NoExecute').timeAdded,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  );
  for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
    const c = lost.status.conditions.find((x: any) => x.type === t);
    assert.deepEqual(
      [c.status, c.reason, c.message],
      ['Unknown', 'NodeStatusNeverUpdated', 'Kubelet never posted node status.'],
    );
  }

  // the agent comes back: lease renewed and Ready=True posted; the controller lifts its taints
  await k.renew();
  await k.postStatus('True');
  const back = await until(async () => {
    const n = await getNode('lease-node');
    return ready(n).status === 'True' && taintKeys(n).length === 0 ? n : undefined;
  }, 'taints removed');
  assert.equal(back.spec.taints, undefined);
});

test('taints follow the conditions: Ready=False is not-ready; cordon adds unschedulable; other taints are kept', async () => {
  const k = new Kubelet('sick-node');
  await k.register();
  const node = await getNode('sick-node');
  node.spec = { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] };
  assert.equal((await request(s.url, 'PUT', `${NODES}/sick-node`, node)).status, 200);
  await k.postStatus('False');
  const sick = await until(async () => {
    const n = await getNode('sick-node');
    return taintKeys(n).length === 3 ? n : undefined;
  }, 'not-ready taints');
  assert.deepEqual(taintKeys(sick), ['dedicated:NoSchedule', `${NOT_READY}:NoExecute`, `${NOT_READY}:NoSchedule`]);
  assert.equal(sick.spec.taints[0].key, 'dedicated', 'existing taints keep their place');

  const p = await request(
    s.url,
    'PATCH',
    `${NODES}/sick-node`,
    { spec: { unschedulable: true } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.equal(p.status, 200, p.text);
  await until(
    async () =>
      taintKeys(await getNode('sick-node')).includes('node.platform.io/unschedulable:NoSchedule') ? true : undefined,
    'unschedulable taint',
  );

  await k.renew();
  await k.postStatus('True');
  const healed = await until(async () => {
    const n = await getNode('sick-node');
    return !taintKeys(n).some((t: string) => t.startsWith(NOT_READY)) ? n : undefined;
  }, 'not-ready taints removed');
  assert.deepEqual(taintKeys(healed), ['dedicated:NoSchedule', 'node.platform.io/unschedulable:NoSchedule']);
});

test('a node that never posted status goes Unknown after the startup grace period (NodeStatusNeverUpdated)', async () => {
  assert.equal((await request(s.url, 'POST', NODES, { metadata: { name: 'mute-node' } })).status, 201);
  const n = await until(async () => {
    const got = await getNode('mute-node');
    return ready(got)?.status === 'Unknown' ? got : undefined;
  }, 'Ready=Unknown');
  assert.equal(ready(n).reason, 'NodeStatusNeverUpdated');
  assert.equal(ready(n).message, 'Kubelet never posted node status.');
});

test('--node-monitor-grace-period must be a duration', async () => {
  await assert.rejects(
    startServer(['--node-monitor-grace-period', 'x']),
    /--node-monitor-grace-period must be a duration/,
  );
});
