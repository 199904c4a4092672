/**
 * The serviceaccount and resourcequota controllers are leader-gated, as upstream runs them in
 * kube-controller-manager (only the leader acts): two servers on one etcd, A leads; A is frozen
 * (SIGSTOP, so it neither acts nor renews), and a namespace and a ResourceQuota created through
 * the follower B get no `default` ServiceAccount and no quota status from B. Once A runs again
 * (SIGCONT) the leader's controllers act and both appear.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/watch.js';
import { startEtcd, type TestEtcd } from '../helpers/etcd.js';

let etcd: TestEtcd;
const servers: TestServer[] = [];
const LEASE = '/apis/coordination.plat.io/v1/namespaces/plat-system/leases/plat-controller-manager';

async function serve(): Promise<TestServer> {
  // a long lease: the frozen leader keeps it for the whole observation window
  const s = await startServer([
    '--storage-backend',
    'etcd3',
    '--etcd-servers',
    etcd.url,
    '--etcd-prefix',
    '/gated',
    '--leader-elect-lease-duration',
    '60s',
    '--leader-elect-renew-deadline',
    '40s',
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
    s.proc.kill('SIGCONT');
    await s.stop('SIGKILL');
    s.cleanup();
  }
  await etcd?.cleanup();
});

const SA = (ns: string): string => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const QUOTA = (ns: string): string => `/api/v1/namespaces/${ns}/resourcequotas/q`;

test('a follower runs neither the serviceaccount nor the resourcequota controller; the leader does', async () => {
  const a = await serve();
  const lease = await until(
    async () => {
      const r = await request(a.url, 'GET', LEASE);
      return r.status === 200 && r.json.spec.holderIdentity ? r.json : undefined;
    },
    'A takes the Lease',
    15_000,
    100,
  );
  const b = await serve();
  // the leader's serviceaccount controller acts on a namespace created through the follower
  assert.equal((await request(b.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'led' } })).status, 201);
  await until(
    async () => (await request(b.url, 'GET', SA('led'))).status === 200,
    'the leader created default in led',
    15_000,
    50,
  );

  a.proc.kill('SIGSTOP');
  assert.equal((await request(b.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'unled' } })).status, 201);
  const quota = { metadata: { name: 'q' }, spec: { hard: { configmaps: '5' } } };
  assert.equal((await request(b.url, 'POST', '/api/v1/namespaces/unled/resourcequotas', quota)).status, 201);
  // an ungated controller on B acts within milliseconds; observe B over two seconds
  const window = Date.now() + 2000;
  while (Date.now() < window) {
    assert.equal((await request(b.url, 'GET', SA('unled'))).status, 404, 'the follower created no ServiceAccount');
    assert.equal(
      (await request(b.url, 'GET', QUOTA('unled'))).json.status?.hard,
      undefined,
      'the follower wrote no quota status',
    );
    await new Promise((res) => setTimeout(res, 100)); // sample the follower through the window
  }
  assert.equal(
    (await request(b.url, 'GET', LEASE)).json.spec.holderIdentity,
    lease.spec.holderIdentity,
    'A still holds the Lease',
  );

  a.proc.kill('SIGCONT');
  await until(
    async () => (await request(b.url, 'GET', SA('unled'))).status === 200,
    'the leader created default in unled',
    20_000,
    100,
  );
  const status = await until(
    async () => (await request(b.url, 'GET', QUOTA('unled'))).json.status,
    'the leader wrote the quota status',
    20_000,
    100,
  );
  assert.deepEqual(status.hard, { configmaps: '5' });
});
