/**
 * Two API server processes on one etcd (same --etcd-prefix, different ports) serving one API:
 * a write through A is read and watched through B in order, a stale resourceVersion on B
 * conflicts with A's write, racing creates of one name have exactly one winner, and every
 * acknowledged write of a concurrent stream through both servers is stored once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcdPair, request, configMap, type TestServer } from '../../helpers/server.js';
import { openWatch, until, type WatchClient } from '../../helpers/watch.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';

let etcd: TestEtcd;
let a: TestServer;
let b: TestServer;
const watches: WatchClient[] = [];
const cms = '/api/v1/namespaces/shared/configmaps';

before(async () => {
  etcd = await startEtcd();
  [a, b] = await startEtcdPair(etcd.url, '/multi', 'shared');
});
after(async () => {
  for (const w of watches) w.close();
  for (const s of [a, b])
    if (s) {
      await s.stop('SIGKILL');
      s.cleanup();
    }
  await etcd?.cleanup();
});

test('writes through A are read and watched through B, in resourceVersion order', async () => {
  const list = await request(b.url, 'GET', cms);
  assert.equal(list.status, 200);
  const w = await openWatch(b.url, `${cms}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
  watches.push(w);
  const rvs: string[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await request(i % 2 ? b.url : a.url, 'POST', cms, configMap(`order-${i}`));
    assert.equal(r.status, 201, r.text);
    rvs.push(r.json.metadata.resourceVersion);
  }
  const upd = await request(a.url, 'PUT', `${cms}/order-0`, {
    ...configMap('order-0', {}, { k: 'changed' }),
    metadata: { name: 'order-0', resourceVersion: rvs[0] },
  });
  assert.equal(upd.status, 200, upd.text);
  const del = await request(a.url, 'DELETE', `${cms}/order-1`);
  assert.equal(del.status, 200, del.text);
  const evs = await w.waitEvents(12);
  assert.deepEqual(
    evs.map((e) => `${e.type} ${e.object.metadata.name}`),
    [...Array.from({ length: 10 }, (_, i) => `ADDED order-${i}`), 'MODIFIED order-0', 'DELETED order-1'],
  );
  const seen = evs.map((e) => Number(e.object.metadata.resourceVersion));
  assert.deepEqual(seen.slice(0, 10), rvs.map(Number), 'the resourceVersions the writers acknowledged');
  for (let i = 1; i < seen.length; i++)
    assert.ok(seen[i]! > seen[i - 1]!, `resourceVersions increase: ${seen.join(',')}`);
  // reads on B serve A's latest state (read cache and actor)
  const got = await request(b.url, 'GET', `${cms}/order-0`);
  assert.equal(got.json.data.k, 'changed');
  assert.equal(got.json.metadata.resourceVersion, upd.json.metadata.resourceVersion);
  assert.equal((await request(b.url, 'GET', `${cms}/order-1`)).status, 404);
});

test("a PUT with a stale resourceVersion on B conflicts with A's update", async () => {
  const c = await request(a.url, 'POST', cms, configMap('stale'));
  assert.equal(c.status, 201, c.text);
  const rv = c.json.metadata.resourceVersion;
  const u = await request(a.url, 'PUT', `${cms}/stale`, {
    ...configMap('stale', {}, { k: 'a' }),
    metadata: { name: 'stale', resourceVersion: rv },
  });
  assert.equal(u.status, 200, u.text);
  const r = await request(b.url, 'PUT', `${cms}/stale`, {
    ...configMap('stale', {}, { k: 'b' }),
    metadata: { name: 'stale', resourceVersion: rv },
  });
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.reason, 'Conflict');
  assert.match(
    r.json.message,
    /the object has been modified; please apply your changes to the latest version and try again/,
  );
  assert.equal((await request(b.url, 'GET', `${cms}/stale`)).json.data.k, 'a');
});

test('racing creates of one name through A and B: exactly one 201, the other 409 AlreadyExists', async () => {
  for (let round = 0; round < 10; round++) {
    const name = `race-${round}`;
    const [ra, rb] = await Promise.all(
      [a, b].map((s) => request(s.url, 'POST', cms, configMap(name, {}, { by: s.url }))),
    );
    const codes = [ra!.status, rb!.status].sort();
    assert.deepEqual(codes, [201, 409], `${ra!.text} ${rb!.text}`);
    const loser = ra!.status === 409 ? ra! : rb!;
    assert.equal(loser.json.reason, 'AlreadyExists');
    const winner = ra!.status === 201 ? ra! : rb!;
    for (const s of [a, b]) {
      await until(
        async () => (await request(s.url, 'GET', `${cms}/${name}`)).json?.metadata?.uid === winner.json.metadata.uid,
        `${name} on ${s.url}`,
      );
    }
  }
});

test('concurrent updates without preconditions through both servers all apply (none lost)', async () => {
  const c = await request(a.url, 'POST', cms, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'counter' },
    data: {},
  });
  assert.equal(c.status, 201, c.text);
  // each server adds its own keys with merge patches: a lost update would drop a key
  const patches = Array.from({ length: 40 }, (_, i) =>
    request(
      i % 2 ? b.url : a.url,
      'PATCH',
      `${cms}/counter`,
      { data: { [`k${i}`]: String(i) } },
      { 'content-type': 'application/merge-patch+json' },
    ),
  );
  for (const r of await Promise.all(patches)) assert.equal(r.status, 200, r.text);
  for (const s of [a, b]) {
    const keys = await until(async () => {
      const got = await request(s.url, 'GET', `${cms}/counter`);
      return Object.keys(got.json.data ?? {}).length === 40 ? got.json.data : undefined;
    }, `40 keys on ${s.url}`);
    assert.equal(Object.keys(keys).length, 40);
  }
});
