/**
 * Two API servers on a three-member etcd cluster: the `etcd` health check, one member killed
 * (-9) and restarted during a stream of creates through both servers without losing an
 * acknowledged write, and all members down: requests fail fast with 503/504 Status and the
 * servers recover once etcd is back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcdPair, request, configMap, type TestServer } from '../../helpers/server.js';
import { until, pool } from '../../helpers/watch.js';
import { startEtcdCluster, type TestEtcdCluster } from '../../helpers/etcd.js';

let cluster: TestEtcdCluster;
let a: TestServer;
let b: TestServer;
const cms = '/api/v1/namespaces/ha/configmaps';

before(async () => {
  cluster = await startEtcdCluster(3);
  [a, b] = await startEtcdPair(cluster.urls.join(','), '/ha', 'ha');
});
after(async () => {
  for (const s of [a, b])
    if (s) {
      await s.stop('SIGKILL');
      s.cleanup();
    }
  await cluster?.cleanup();
});

test('/livez and /readyz include an etcd check', async () => {
  for (const path of ['/livez?verbose', '/readyz?verbose']) {
    const r = await request(a.url, 'GET', path);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /^\[\+\]etcd ok$/m);
  }
  assert.equal((await request(a.url, 'GET', '/readyz/etcd')).text, 'ok');
});

test('one member killed and restarted during creates through both servers: no acknowledged write lost', async () => {
  const acked = new Map<string, string>();
  const failures: number[] = [];
  const names = Array.from({ length: 300 }, (_, i) => `m-${i}`);
  await pool(names, 8, async (name, i) => {
    if (i === 100) await cluster.members[0]!.stop('SIGKILL');
    if (i === 200) await cluster.members[0]!.restart();
    const r = await request(i % 2 ? b.url : a.url, 'POST', cms, configMap(name));
    if (r.status === 201) acked.set(name, r.json.metadata.uid);
    else {
      // an unacknowledged write may fail while the client moves to another member, but only as a Status
      assert.equal(r.json?.kind, 'Status', r.text);
      failures.push(r.status);
    }
  });
  assert.ok(
    acked.size >= 250,
    `most creates succeed while a quorum holds (${acked.size} acked, failures ${failures.join(',')})`,
  );
  for (const s of [a, b]) {
    const list = await request(s.url, 'GET', cms);
    assert.equal(list.status, 200, list.text);
    const stored = new Map<string, string>(list.json.items.map((i: any) => [i.metadata.name, i.metadata.uid]));
    const lost = [...acked.keys()].filter((n) => stored.get(n) !== acked.get(n));
    assert.deepEqual(lost, [], `acknowledged writes lost on ${s.url}`);
  }
});

test('all members down: requests answer 503/504 Status quickly, readyz fails, and both servers recover', async () => {
  for (const m of cluster.members) await m.stop('SIGKILL');
  for (const [method, path, body] of [
    ['GET', `${cms}/m-0`, undefined],
    ['GET', cms, undefined],
    ['POST', cms, configMap('while-down')],
  ] as const) {
    const started = Date.now();
    const r = await request(a.url, method, path, body);
    const ms = Date.now() - started;
    assert.ok([503, 504].includes(r.status), `${method} ${path}: ${r.status} ${r.text}`);
    assert.equal(r.json.kind, 'Status');
    assert.ok(ms < 16_000, `${method} ${path} answered in ${ms} ms`);
  }
  const ready = await request(a.url, 'GET', '/readyz?verbose');
  assert.equal(ready.status, 500);
  assert.match(ready.text, /^\[-\]etcd failed: reason withheld$/m);
  await Promise.all(cluster.members.map((m) => m.restart()));
  const created = await until(
    async () => {
      const r = await request(a.url, 'POST', cms, configMap('after-recovery'));
      return r.status === 201 || r.status === 409 ? r : undefined;
    },
    'a create after recovery',
    30_000,
    200,
  );
  assert.ok(created);
  await until(
    async () => (await request(b.url, 'GET', `${cms}/after-recovery`)).status === 200,
    'the write on B after recovery',
    30_000,
    200,
  );
  await until(async () => (await request(b.url, 'GET', '/readyz')).status === 200, 'readyz on B', 30_000, 200);
});
