/**
 * The namespaces the server keeps may not be deleted (issue 19 item 8; upstream
 * NamespaceLifecycle: default, kube-system, kube-public, kube-node-lease), and the labels the
 * server writes follow the API domain (item 11: `kubernetes.io/metadata.name` under k8s.io).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServers, stopServers, request, type TestServer } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';
import { until } from '../helpers/poll.js';

let plat: TestServer;
let k8s: TestServer;
before(async () => {
  [plat, k8s] = await startServers([], ['--api-domain', 'k8s.io']);
});
after(() => stopServers([plat, k8s]));

const cases: [() => TestServer, string[]][] = [
  [() => plat, ['default', 'plat-system', 'plat-public', 'plat-node-lease']],
  [() => k8s, ['default', 'kube-system', 'kube-public', 'kube-node-lease']],
];

test('deleting a system namespace is 403 Forbidden and leaves it Active', async () => {
  for (const [server, names] of cases) {
    for (const name of names) {
      const r = await request(server().url, 'DELETE', `/api/v1/namespaces/${name}`);
      assertStatus(r, 403, 'Forbidden');
      assert.equal(r.json.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      assert.deepEqual(r.json.details, { name, kind: 'namespaces' });
      const ns = await request(server().url, 'GET', `/api/v1/namespaces/${name}`);
      assert.equal(ns.status, 200, `${name} still exists`);
      assert.equal(ns.json.status.phase, 'Active');
    }
  }
});

test("an ordinary namespace named like another identity's system namespace can be deleted", async () => {
  const created = await request(k8s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'plat-system' } });
  assert.equal(created.status, 201, created.text);
  const r = await request(k8s.url, 'DELETE', '/api/v1/namespaces/plat-system');
  assert.equal(r.status, 200, r.text);
  // the namespace controller removes the identity's finalizer and the namespace goes
  await until(
    async () => ((await request(k8s.url, 'GET', '/api/v1/namespaces/plat-system')).status === 404 ? true : undefined),
    'plat-system to be gone',
  );
});

test('the namespace spec finalizer is the product word of the identity', async () => {
  assert.deepEqual((await request(plat.url, 'GET', '/api/v1/namespaces/default')).json.spec, {
    finalizers: ['platform'],
  });
  assert.deepEqual((await request(k8s.url, 'GET', '/api/v1/namespaces/default')).json.spec, {
    finalizers: ['kubernetes'],
  });
});

test('the namespace name label uses the domain of the identity', async () => {
  const want: [TestServer, string, string][] = [
    [plat, 'platform.io/metadata.name', 'kubernetes.io/metadata.name'],
    [k8s, 'kubernetes.io/metadata.name', 'platform.io/metadata.name'],
  ];
  for (const [server, label, other] of want) {
    const created = await request(server.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'labelled' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.metadata.labels, { [label]: 'labelled' });
    for (const name of ['default', 'labelled']) {
      const ns = await request(server.url, 'GET', `/api/v1/namespaces/${name}`);
      assert.equal(ns.json.metadata.labels[label], name);
      assert.equal(ns.json.metadata.labels[other], undefined);
    }
    const sel = await request(
      server.url,
      'GET',
      `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${label}=labelled`)}`,
    );
    assert.deepEqual(
      sel.json.items.map((n: any) => n.metadata.name),
      ['labelled'],
    );
  }
});

test("a Job's generated selector and template labels use the domain of the identity", async () => {
  const job = {
    metadata: { name: 'pi' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  };
  const r = await request(k8s.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', job);
  assert.equal(r.status, 201, r.text);
  const uid = r.json.metadata.uid;
  assert.deepEqual(r.json.spec.selector.matchLabels, { 'batch.kubernetes.io/controller-uid': uid });
  assert.equal(r.json.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'pi');
  assert.equal(r.json.spec.template.metadata.labels['batch.platform.io/job-name'], undefined);
});
