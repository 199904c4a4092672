/**
 * A batch of writes on the etcd backend when one of them conflicts with a write the server has
 * not seen yet (a key written straight into etcd): only that write answers 409, the others
 * commit; and every acknowledged create survives kill -9 of the server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { configMap, request, startServer, type TestServer } from '../../helpers/server.js';

const NS = 'batch';
const ROUNDS = 4;
const PER_ROUND = 8;

test('etcd batch: one conflicting write fails alone, acknowledged writes survive kill -9', async () => {
  const etcd: TestEtcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.url });
  const args = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.url, '--etcd-prefix', '/batch'];
  let server: TestServer | undefined = await startServer(args);
  try {
    assert.equal((await request(server.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
    assert.equal(
      (await request(server.url, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap('probe'))).status,
      201,
    );
    // the etcd key of a ConfigMap in this namespace, from the one just created
    const keys = await client.getAll().prefix('/batch/').keys();
    const probeKey = keys.find((k) => k.endsWith(`/${NS}/probe`));
    assert.ok(probeKey, `no key for the probe among ${keys.join(', ')}`);
    const keyOf = (name: string): string => probeKey.slice(0, -'probe'.length) + name;
    const acked: string[] = ['probe'];
    for (let r = 0; r < ROUNDS; r++) {
      const clash = `clash-${r}`;
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: clash,
          namespace: NS,
          uid: `u-${r}`,
          resourceVersion: '1',
          creationTimestamp: '2026-01-01T00:00:00Z',
        },
        data: { from: 'etcd' },
      });
      // written behind the server's back: its compare sees the key, its cache may not yet
      await client.put(keyOf(clash)).value(body);
      const names = [clash, ...Array.from({ length: PER_ROUND - 1 }, (_, i) => `ok-${r}-${i}`)];
      const replies = await Promise.all(
        names.map((n) => request(server!.url, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(n))),
      );
      assert.equal(replies[0]!.status, 409, `round ${r}: ${clash}: ${replies[0]!.text}`);
      assert.equal(replies[0]!.json.reason, 'AlreadyExists');
      replies.slice(1).forEach((rep, i) => assert.equal(rep.status, 201, `round ${r}: ${names[i + 1]}: ${rep.text}`));
      acked.push(...names.slice(1));
    }
    // every acknowledged create is durable: kill -9, then a new server on the same prefix has them
    await server.stop('SIGKILL');
    server.cleanup();
    server = await startServer(args);
    const list = await request(server.url, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
    assert.equal(list.status, 200);
    const names = new Set((list.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
    for (const n of acked) assert.ok(names.has(n), `acknowledged ${n} lost after kill -9`);
    const clash = await request(server.url, 'GET', `/api/v1/namespaces/${NS}/configmaps/clash-0`);
    assert.equal(clash.json.data.from, 'etcd', 'the conflicting create must not have overwritten the etcd key');
  } finally {
    await server?.stop();
    server?.cleanup();
    client.close();
    await etcd.cleanup();
  }
});
