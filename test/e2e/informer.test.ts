import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startServer, type TestServer } from '../helpers/server.js';
import { api, pool, until } from '../helpers/watch.js';

const NS = 'informer';
const OBJECTS = 400;
const DELETED = 200;

describe('@kubernetes/client-node informer', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('sees every add, update and delete of a burst of 1,000 changes', async () => {
    const a = api(s.url);
    await a.namespace(NS);
    await a.create(NS, 'pre-existing');
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'local', server: s.url, skipTLSVerify: true }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'local', cluster: 'local', user: 'anonymous' }],
      currentContext: 'local',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: NS }),
    );
    const counts = { add: 0, update: 0, delete: 0 };
    const errors: unknown[] = [];
    informer.on('add', () => {
      counts.add++;
    });
    informer.on('update', () => {
      counts.update++;
    });
    informer.on('delete', () => {
      counts.delete++;
    });
    informer.on('error', (e) => {
      errors.push(e);
    });
    await informer.start();
    try {
      await until(async () => counts.add === 1, 'the listed object', 5000);
      // one chain per object: create, update, and for half of them delete: 1,000 changes
      await pool(
        Array.from({ length: OBJECTS }, (_, i) => i),
        32,
        async (i) => {
          const name = `cm-${i}`;
          await a.create(NS, name, { i: String(i) });
          await a.update(NS, name, { k: `updated-${i}` });
          if (i < DELETED) await a.remove(NS, name);
        },
      );
      const want = { add: 1 + OBJECTS, update: OBJECTS, delete: DELETED };
      await until(
        async () => counts.add >= want.add && counts.update >= want.update && counts.delete >= want.delete,
        `informer counts ${JSON.stringify(want)}`,
        30_000,
        50,
      );
      assert.deepEqual(counts, want);
      assert.deepEqual(errors, []);
      const server = await a.list(NS);
      const cached = informer
        .list(NS)
        .map((o) => [o.metadata!.name, o.metadata!.resourceVersion])
        .sort();
      assert.deepEqual(cached, server.items.map((o: any) => [o.metadata.name, o.metadata.resourceVersion]).sort());
      assert.equal(cached.length, 1 + OBJECTS - DELETED);
      assert.equal(informer.get('cm-399', NS)?.data?.k, 'updated-399');
    } finally {
      await informer.stop();
    }
  });
});
