/**
 * Chunked lists over a thousand objects: continue tokens, consistent snapshots across chunks,
 * remainingItemCount, ordering (namespace, then name), token expiry and the spec's invalid
 * combinations of list parameters.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServers, stopServers, request, configMap, type TestServer } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';

const NS = 'list-1k';
const SNAP = 'list-snap';
const N = 1000;
const BATCH = 50;

let s: TestServer;
let shortTtl: TestServer;
const names: string[] = [];

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const nameOf = (i: number) => `cm-${String(i).padStart(4, '0')}`;

async function createNamespace(t: TestServer, name: string): Promise<void> {
  const r = await request(t.url, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  assert.equal(r.status, 201, r.text);
}

/** Creates the given indices concurrently, BATCH at a time. */
async function createMany(t: TestServer, ns: string, indices: number[]): Promise<void> {
  for (let i = 0; i < indices.length; i += BATCH) {
    const rs = await Promise.all(
      indices
        .slice(i, i + BATCH)
        .map((n) =>
          request(
            t.url,
            'POST',
            cms(ns),
            configMap(nameOf(n), { parity: n % 2 ? 'odd' : 'even', bucket: String(n % 10) }),
          ),
        ),
    );
    for (const r of rs) assert.equal(r.status, 201, r.text);
  }
}

/** Follows continue tokens (bounded) and returns every chunk. */
async function allChunks(t: TestServer, path: string, limit: number): Promise<any[]> {
  const chunks: any[] = [];
  const sep = path.includes('?') ? '&' : '?';
  let cont: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const r = await request(
      t.url,
      'GET',
      `${path}${sep}limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
    );
    assert.equal(r.status, 200, r.text.slice(0, 300));
    chunks.push(r.json);
    cont = r.json.metadata.continue;
    if (!cont) return chunks;
  }
  assert.fail('continue chain did not end');
}

before(async () => {
  [s, shortTtl] = await startServers([], ['--continue-token-ttl', '1s']);
  await createNamespace(s, NS);
  await createNamespace(s, SNAP);
  // create in a scrambled order so that name order is the server's doing
  const order = Array.from({ length: N }, (_, i) => (i * 7919) % N);
  await createMany(s, NS, order);
  for (let i = 0; i < N; i++) names.push(nameOf(i));
  await createMany(
    s,
    SNAP,
    Array.from({ length: 250 }, (_, i) => i),
  );
});
after(() => stopServers([s, shortTtl]));

test('an unchunked list returns all 1,000 objects in name order', async () => {
  const r = await request(s.url, 'GET', cms(NS));
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'ConfigMapList');
  assert.equal(r.json.apiVersion, 'v1');
  assert.deepEqual(
    r.json.items.map((i: any) => i.metadata.name),
    names,
  );
  assert.equal(r.json.metadata.continue, undefined);
  assert.equal(r.json.metadata.remainingItemCount, undefined);
  for (const it of r.json.items) {
    assert.equal(it.kind, 'ConfigMap');
    assert.equal(it.apiVersion, 'v1');
  }
});

test('limit=100 chunks: each object once, in order, one snapshot, correct remainingItemCount', async () => {
  const chunks = await allChunks(s, cms(NS), 100);
  assert.equal(chunks.length, 10);
  const seen = chunks.flatMap((c) => c.items.map((i: any) => i.metadata.name));
  assert.deepEqual(seen, names, 'every object exactly once, in name order');
  const rv = chunks[0].metadata.resourceVersion;
  assert.equal(typeof rv, 'string');
  chunks.forEach((c, i) => {
    assert.equal(c.items.length, 100, `chunk ${i} size`);
    assert.equal(c.metadata.resourceVersion, rv, `chunk ${i} resourceVersion`);
    if (i < chunks.length - 1) {
      assert.equal(typeof c.metadata.continue, 'string');
      assert.ok(c.metadata.continue.length > 0);
      assert.equal(c.metadata.remainingItemCount, N - 100 * (i + 1), `chunk ${i} remainingItemCount`);
    }
  });
  assert.equal(chunks[0].metadata.remainingItemCount, 900);
  const last = chunks[chunks.length - 1].metadata;
  assert.ok(last.continue === undefined || last.continue === '', 'no continue on the last chunk');
  assert.equal(last.remainingItemCount, undefined);
});

test('a limit that divides unevenly ends with a short last chunk', async () => {
  const chunks = await allChunks(s, cms(NS), 300);
  assert.deepEqual(
    chunks.map((c) => c.items.length),
    [300, 300, 300, 100],
  );
  assert.deepEqual(
    chunks.map((c) => c.metadata.remainingItemCount),
    [700, 400, 100, undefined],
  );
  const big = await request(s.url, 'GET', `${cms(NS)}?limit=5000`);
  assert.equal(big.json.items.length, N);
  assert.ok(!big.json.metadata.continue);
  assert.equal(big.json.metadata.remainingItemCount, undefined);
});

test('writes between chunks do not appear in later chunks (consistent snapshot)', async () => {
  const first = await request(s.url, 'GET', `${cms(SNAP)}?limit=100`);
  assert.equal(first.status, 200);
  assert.equal(first.json.metadata.remainingItemCount, 150);
  const snapRV = first.json.metadata.resourceVersion;
  // after the first chunk: add objects that sort into later chunks, delete one and modify one
  for (const n of ['cm-0150-new', 'cm-0249-new', 'zz-new']) {
    assert.equal((await request(s.url, 'POST', cms(SNAP), configMap(n))).status, 201);
  }
  assert.equal((await request(s.url, 'DELETE', `${cms(SNAP)}/cm-0200`)).status, 200);
  const cur = await request(s.url, 'GET', `${cms(SNAP)}/cm-0220`);
  const upd = await request(s.url, 'PUT', `${cms(SNAP)}/cm-0220`, { ...cur.json, data: { k: 'changed' } });
  assert.equal(upd.status, 200);
  // also a write that sorts before the cursor must not shift anything
  assert.equal((await request(s.url, 'DELETE', `${cms(SNAP)}/cm-0010`)).status, 200);

  const rest: any[] = [];
  const remaining: unknown[] = [];
  let cont: string | undefined = first.json.metadata.continue;
  for (let i = 0; i < 10 && cont; i++) {
    const r = await request(s.url, 'GET', `${cms(SNAP)}?limit=100&continue=${encodeURIComponent(cont)}`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(r.json.metadata.resourceVersion, snapRV);
    remaining.push(r.json.metadata.remainingItemCount);
    rest.push(...r.json.items);
    cont = r.json.metadata.continue;
  }
  assert.ok(!cont, 'the chain ended');
  assert.deepEqual(remaining, [50, undefined], 'remainingItemCount counts the snapshot');
  const restNames = rest.map((i) => i.metadata.name);
  assert.deepEqual(
    restNames,
    Array.from({ length: 150 }, (_, i) => nameOf(100 + i)),
    'the snapshot as of the first chunk',
  );
  const c220 = rest.find((i) => i.metadata.name === 'cm-0220');
  assert.deepEqual(c220.data, { k: 'v' }, 'the old state of a modified object');
  assert.equal(c220.metadata.resourceVersion, cur.json.metadata.resourceVersion);

  const fresh = await request(s.url, 'GET', cms(SNAP));
  const freshNames: string[] = fresh.json.items.map((i: any) => i.metadata.name);
  assert.equal(freshNames.length, 250 + 3 - 2);
  for (const n of ['cm-0150-new', 'cm-0249-new', 'zz-new']) assert.ok(freshNames.includes(n), n);
  assert.ok(!freshNames.includes('cm-0200') && !freshNames.includes('cm-0010'));
  assert.notEqual(fresh.json.metadata.resourceVersion, snapRV);
});

test('a selector list omits remainingItemCount but still chunks', async () => {
  const label = await allChunks(s, `${cms(NS)}?labelSelector=parity%3Deven`, 100);
  assert.equal(label.length, 5);
  for (const c of label) assert.equal(c.metadata.remainingItemCount, undefined);
  assert.ok(label[0].metadata.continue, 'the first chunk has a continue token');
  const evens = label.flatMap((c) => c.items.map((i: any) => i.metadata.name));
  assert.deepEqual(
    evens,
    names.filter((_, i) => i % 2 === 0),
  );
  assert.ok(label.every((c) => c.metadata.resourceVersion === label[0].metadata.resourceVersion));

  const field = await request(s.url, 'GET', `${cms(NS)}?fieldSelector=metadata.name!%3Dcm-0000&limit=100`);
  assert.equal(field.status, 200);
  assert.equal(field.json.items.length, 100);
  assert.equal(field.json.items[0].metadata.name, 'cm-0001');
  assert.equal(field.json.metadata.remainingItemCount, undefined);
  assert.ok(field.json.metadata.continue);

  const set = await request(s.url, 'GET', `${cms(NS)}?labelSelector=bucket%20in%20(3,7),parity%3Dodd`);
  assert.equal(set.json.items.length, 200);
  assert.equal(set.json.metadata.remainingItemCount, undefined);
});

test('an all-namespaces list is ordered by namespace, then name', async () => {
  const r = await request(s.url, 'GET', '/api/v1/configmaps');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'ConfigMapList');
  const keys: [string, string][] = r.json.items.map((i: any) => [i.metadata.namespace, i.metadata.name]);
  const namespaces = new Set(keys.map(([ns]) => ns));
  assert.ok(namespaces.has(NS) && namespaces.has(SNAP), 'both test namespaces present');
  const sorted = [...keys].sort(([a1, b1], [a2, b2]) => (a1 < a2 ? -1 : a1 > a2 ? 1 : b1 < b2 ? -1 : b1 > b2 ? 1 : 0));
  assert.deepEqual(keys, sorted);
  // chunking across the namespace boundary loses and repeats nothing
  const chunks = await allChunks(s, '/api/v1/configmaps', 333);
  const chunked = chunks.flatMap((c) => c.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`));
  assert.deepEqual(
    chunked,
    keys.map(([ns, n]) => `${ns}/${n}`),
  );
  assert.equal(chunks[0].metadata.remainingItemCount, keys.length - 333);
});

test('an expired continue token is 410 Expired', async () => {
  await createNamespace(shortTtl, SNAP);
  await createMany(shortTtl, SNAP, [0, 1, 2]);
  const first = await request(shortTtl.url, 'GET', `${cms(SNAP)}?limit=1`);
  const token = first.json.metadata.continue;
  assert.ok(token);
  const soon = await request(shortTtl.url, 'GET', `${cms(SNAP)}?limit=1&continue=${encodeURIComponent(token)}`);
  assert.equal(soon.status, 200, 'a fresh token works');
  assert.equal(soon.json.items[0].metadata.name, 'cm-0001');
  // Expiry is a function of wall-clock time alone (--continue-token-ttl 1s), so there is no
  // condition to poll for: this one fixed wait just past the TTL is the synchronisation.
  await new Promise((r) => setTimeout(r, 1200));
  const late = await request(shortTtl.url, 'GET', `${cms(SNAP)}?limit=1&continue=${encodeURIComponent(token)}`);
  assertStatus(late, 410, 'Expired');
  // a new list still works
  assert.equal((await request(shortTtl.url, 'GET', `${cms(SNAP)}?limit=1`)).status, 200);
});

test('a garbage continue token is 400', async () => {
  for (const bad of [
    'garbage',
    '%zz',
    Buffer.from('{"rv":"x"}').toString('base64url'),
    Buffer.from('[1,2]').toString('base64url'),
  ]) {
    const r = await request(s.url, 'GET', `${cms(NS)}?limit=10&continue=${bad}`);
    assertStatus(r, 400, 'BadRequest');
  }
});

test('invalid combinations of resourceVersion, resourceVersionMatch and continue are 400', async () => {
  const first = await request(s.url, 'GET', `${cms(NS)}?limit=10`);
  const token = encodeURIComponent(first.json.metadata.continue);
  assertStatus(
    await request(s.url, 'GET', `${cms(NS)}?limit=10&resourceVersion=5&continue=${token}`),
    400,
    'BadRequest',
  );
  assertStatus(
    await request(s.url, 'GET', `${cms(NS)}?limit=10&resourceVersionMatch=Exact&continue=${token}`),
    400,
    'BadRequest',
  );
  assertStatus(await request(s.url, 'GET', `${cms(NS)}?resourceVersionMatch=Exact`), 400, 'BadRequest');
  assertStatus(await request(s.url, 'GET', `${cms(NS)}?resourceVersionMatch=NotOlderThan`), 400, 'BadRequest');
  assertStatus(
    await request(s.url, 'GET', `${cms(NS)}?resourceVersionMatch=Exact&resourceVersion=0`),
    400,
    'BadRequest',
  );
  assertStatus(
    await request(s.url, 'GET', `${cms(NS)}?resourceVersionMatch=Bogus&resourceVersion=1`),
    400,
    'BadRequest',
  );
  // resourceVersion=0 with a continue token is treated as the token alone
  const zero = await request(s.url, 'GET', `${cms(NS)}?limit=10&resourceVersion=0&continue=${token}`);
  assert.equal(zero.status, 200);
  assert.equal(zero.json.items[0].metadata.name, 'cm-0010');
  assert.equal(zero.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
});

test('resourceVersionMatch=Exact lists at the requested version', async () => {
  const first = await request(s.url, 'GET', `${cms(SNAP)}?limit=5`);
  const rv = first.json.metadata.resourceVersion;
  assert.equal((await request(s.url, 'POST', cms(SNAP), configMap('aa-after-exact'))).status, 201);
  const exact = await request(s.url, 'GET', `${cms(SNAP)}?resourceVersion=${rv}&resourceVersionMatch=Exact&limit=5`);
  assert.equal(exact.status, 200, exact.text);
  assert.equal(exact.json.metadata.resourceVersion, rv);
  assert.deepEqual(
    exact.json.items.map((i: any) => i.metadata.name),
    first.json.items.map((i: any) => i.metadata.name),
  );
  // with limit and no resourceVersionMatch, a non-zero resourceVersion is also an exact read
  const implicit = await request(s.url, 'GET', `${cms(SNAP)}?resourceVersion=${rv}&limit=5`);
  assert.equal(implicit.status, 200);
  assert.equal(implicit.json.metadata.resourceVersion, rv);
  assert.deepEqual(
    implicit.json.items.map((i: any) => i.metadata.name),
    first.json.items.map((i: any) => i.metadata.name),
  );
  const now = await request(s.url, 'GET', `${cms(SNAP)}?limit=5`);
  assert.equal(now.json.items[0].metadata.name, 'aa-after-exact');
});
