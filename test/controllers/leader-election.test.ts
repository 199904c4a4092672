/**
 * Controllers under leader election: two servers on one etcd, one coordination Lease
 * (`plat-system/plat-controller-manager`), the first server leads; the namespace controller
 * of the leader finalizes a namespace deleted through the other server; after the leader is
 * killed (-9) the other server takes the Lease over (leaseTransitions + 1) and its
 * controllers (namespace, ClusterRole aggregation) act.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/watch.js';
import { startEtcd, type TestEtcd } from '../helpers/etcd.js';

let etcd: TestEtcd;
const servers: TestServer[] = [];
const LEASE = '/apis/coordination.plat.io/v1/namespaces/plat-system/leases/plat-controller-manager';

async function serve(): Promise<TestServer> {
  const s = await startServer([
    '--storage-backend',
    'etcd3',
    '--etcd-servers',
    etcd.url,
    '--etcd-prefix',
    '/le',
    '--leader-elect-lease-duration',
    '3s',
    '--leader-elect-renew-deadline',
    '2s',
    '--leader-elect-retry-period',
    '250ms',
  ]);
  servers.push(s);
  return s;
}

before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  for (const s of servers) {
    await s.stop('SIGKILL');
    s.cleanup();
  }
  await etcd?.cleanup();
});

/** Deletes a namespace holding a ConfigMap through `via`; resolves once it is gone (a controller emptied and finalized it). */
async function namespaceLifecycle(via: TestServer, name: string, timeoutMs: number): Promise<void> {
  assert.equal((await request(via.url, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
  await until(
    async () =>
      (await request(via.url, 'POST', `/api/v1/namespaces/${name}/configmaps`, configMap('x'))).status === 201,
    `a ConfigMap in ${name}`,
  );
  assert.equal((await request(via.url, 'DELETE', `/api/v1/namespaces/${name}`)).status, 200);
  await until(
    async () => (await request(via.url, 'GET', `/api/v1/namespaces/${name}`)).status === 404,
    `namespace ${name} finalized`,
    timeoutMs,
    100,
  );
}

/** A ClusterRole aggregated into `view`; resolves once the leader's aggregation wrote its rule into `view`. */
async function aggregated(via: TestServer, resource: string): Promise<void> {
  const role = {
    apiVersion: 'rbac.authorization.plat.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `extra-${resource}`, labels: { 'rbac.authorization.plat.io/aggregate-to-view': 'true' } },
    rules: [{ apiGroups: ['example.com'], resources: [resource], verbs: ['get'] }],
  };
  assert.equal((await request(via.url, 'POST', '/apis/rbac.authorization.plat.io/v1/clusterroles', role)).status, 201);
  await until(
    async () => {
      const v = await request(via.url, 'GET', '/apis/rbac.authorization.plat.io/v1/clusterroles/view');
      return (v.json.rules ?? []).some((r: any) => r.resources?.includes(resource));
    },
    `${resource} aggregated into view`,
    15_000,
    100,
  );
}

test("one leader at a time; the follower's requests are acted on by the leader; failover after kill -9", async () => {
  const a = await serve();
  const first = await until(
    async () => {
      const r = await request(a.url, 'GET', LEASE);
      return r.status === 200 && r.json.spec.holderIdentity ? r.json : undefined;
    },
    'the first server takes the Lease',
    15_000,
    100,
  );
  assert.equal(first.spec.leaseDurationSeconds, 3);
  assert.match(first.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime');
  const b = await serve();
  // the first server keeps leading while it renews: B never takes over
  const deadline = Date.now() + 4000;
  while (Date.now() < deadline) {
    const r = await request(b.url, 'GET', LEASE);
    assert.equal(r.json.spec.holderIdentity, first.spec.holderIdentity, 'the holder stays while it renews');
    await new Promise((res) => setTimeout(res, 250)); // sample the Lease over more than one lease duration
  }
  await namespaceLifecycle(b, 'via-follower', 15_000);
  await aggregated(b, 'before-failover');

  await a.stop('SIGKILL');
  const taken = await until(
    async () => {
      const r = await request(b.url, 'GET', LEASE);
      return r.status === 200 && r.json.spec.holderIdentity !== first.spec.holderIdentity ? r.json : undefined;
    },
    'B takes the Lease over',
    15_000,
    100,
  );
  assert.equal(taken.spec.leaseTransitions, (first.spec.leaseTransitions ?? 0) + 1);
  await namespaceLifecycle(b, 'after-failover', 15_000);
  await aggregated(b, 'after-failover');
});
