/**
 * What the conformance suite cannot see from the Backend interface: the etcd key layout,
 * transactions and their limits, snapshot reads across pages, large pages, compaction, and
 * an unreachable etcd. Runs against a real etcd (test/helpers/etcd.ts).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { EtcdBackend } from '../../../src/storage/etcd/etcd-backend.js';
import { CommitConflict, type RemoteChange } from '../../../src/storage/interface.js';
import { Compactor } from '../../../src/storage/etcd/compactor.js';
import type { EtcdConfig } from '../../../src/storage/etcd/etcd-client.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';

let etcd: TestEtcd;
let raw: Etcd3;
const open: EtcdBackend[] = [];
let cfg: EtcdConfig;

async function backend(
  space: string,
  options: ConstructorParameters<typeof EtcdBackend>[2] = {},
): Promise<EtcdBackend> {
  const b = new EtcdBackend(cfg, space, options);
  open.push(b);
  await b.open();
  return b;
}

/** mod_revision of every key under a raw etcd prefix */
async function modRevisions(prefix: string): Promise<Map<string, number>> {
  const res = await raw.kv.range({
    key: Buffer.from(prefix),
    range_end: Buffer.from(prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)),
  });
  return new Map(res.kvs.map((kv) => [kv.key.toString(), Number(kv.mod_revision)]));
}

before(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.url });
  cfg = { servers: [etcd.url], prefix: '/t', compactionIntervalMs: 0 };
});
after(async () => {
  for (const b of open) await b.close();
  raw?.close();
  await etcd?.cleanup();
});

describe('EtcdBackend on etcd', () => {
  it('stores objects under <prefix>/<space>/<key> and the revision record under <prefix>/<space>/\\0meta/revision', async () => {
    const b = await backend('layout');
    await b.commit(
      [
        { key: '/configmaps/ns/a', value: '{}' },
        { key: 'apps/deployments/ns/d', value: '{}' },
      ],
      12,
    );
    const keys = [...(await raw.getAll().prefix('/t/').keys())].sort();
    assert.deepEqual(keys, [
      '/t/layout/\u0000meta/revision',
      '/t/layout//configmaps/ns/a',
      '/t/layout/apps/deployments/ns/d',
    ]);
    assert.equal(await raw.get('/t/layout/\u0000meta/revision').string(), '12');
    // a delete records its resourceVersion in the record (an etcd delete event has no value)
    await b.commit([{ key: '/configmaps/ns/a', value: undefined, rv: 13 }], 13);
    assert.deepEqual(JSON.parse((await raw.get('/t/layout/\u0000meta/revision').string()) ?? ''), {
      rv: 13,
      del: { '/configmaps/ns/a': 13 },
    });
  });

  it('commits a batch within the limits as one etcd transaction, revision included', async () => {
    const b = await backend('one-txn');
    await b.commit(
      Array.from({ length: 100 }, (_, i) => ({ key: `k/${i}`, value: String(i) })),
      100,
    );
    const revs = new Set((await modRevisions('/t/one-txn/')).values());
    assert.equal(revs.size, 1, 'one etcd revision for all 101 keys');
  });

  it('splits a batch above --max-txn-ops into transactions, each carrying the revision', async () => {
    const b = await backend('split');
    await b.commit(
      Array.from({ length: 300 }, (_, i) => ({ key: `k/${String(i).padStart(3, '0')}`, value: String(i) })),
      300,
    );
    const mods = await modRevisions('/t/split/');
    const revMod = mods.get('/t/split/\u0000meta/revision');
    mods.delete('/t/split/\u0000meta/revision');
    assert.equal(mods.size, 300);
    const distinct = [...new Set(mods.values())].sort((x, y) => x - y);
    assert.equal(distinct.length, 3, '127 + 127 + 46 writes');
    assert.equal(revMod, distinct[2], 'the revision key was last written with the last transaction');
    assert.equal(b.revision(), 300);
  });

  it("loads a page larger than grpc's default 4 MiB receive limit", async () => {
    const b = await backend('big-page');
    const value = 'v'.repeat(8 * 1024);
    for (let i = 0; i < 1000; i += 100) {
      await b.commit(
        Array.from({ length: 100 }, (_, j) => ({ key: `k/${String(i + j).padStart(4, '0')}`, value })),
        i + 100,
      );
    }
    const again = await backend('big-page');
    let count = 0,
      pages = 0;
    for await (const page of again.range('')) {
      pages++;
      count += page.length;
    }
    assert.equal(count, 1000);
    assert.equal(pages, 2, 'the revision record and 999 keys x 8 KB = 8 MB in the first page, one key in the second');
  });

  it('reads every page at the revision of the first one', async () => {
    const writer = await backend('snapshot');
    await writer.commit(
      Array.from({ length: 30 }, (_, i) => ({ key: `k/${String(i).padStart(2, '0')}`, value: 'old' })),
      30,
    );
    const reader = await backend('snapshot', { pageKeys: 10 });
    const seen: string[] = [];
    let pages = 0;
    for await (const page of reader.range('k/')) {
      if (pages++ === 0) {
        // after the first page: change a later key, add one, delete one
        await writer.commit(
          [
            { key: 'k/25', value: 'new' },
            { key: 'k/99', value: 'added' },
            { key: 'k/15', value: undefined },
          ],
          31,
        );
      }
      seen.push(...page.map((e) => `${e.key}=${e.value}`));
    }
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      Array.from({ length: 30 }, (_, i) => `k/${String(i).padStart(2, '0')}=old`),
    );
  });

  it('names the keys changed behind the revision record when it refuses a batch, and writes none of it', async () => {
    const b = await backend('behind');
    for await (const page of b.range('')) void page;
    await b.commit([{ key: 'k/known', value: 'v1' }], 1);
    // a writer outside the protocol: the record does not move, the key's compare fails
    await raw.put('/t/behind/k/clash').value('theirs');
    const clashRev = (await modRevisions('/t/behind/')).get('/t/behind/k/clash')!;
    const err = await b
      .commit(
        [
          { key: 'k/fresh', value: 'mine' },
          { key: 'k/clash', value: 'mine' },
          { key: 'k/known', value: 'v2' },
        ],
        2,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof CommitConflict, `expected a CommitConflict, got ${String(err)}`);
    assert.deepEqual(err.keys, ['k/clash']);
    // the catch-up waits for the key's change, not only for the (unmoved) record
    assert.equal(err.rev, clashRev);
    assert.equal(await raw.get('/t/behind/k/fresh').string(), null);
    assert.equal(await raw.get('/t/behind/k/clash').string(), 'theirs');
    assert.equal(await raw.get('/t/behind/k/known').string(), 'v1');
  });

  it('rejects open() quickly when etcd cannot be reached', async () => {
    const b = new EtcdBackend({ servers: ['http://127.0.0.1:1'], prefix: '/t', compactionIntervalMs: 0 }, 'down');
    open.push(b);
    const started = Date.now();
    await assert.rejects(b.open());
    assert.ok(Date.now() - started < 20_000, `rejected after ${Date.now() - started} ms`);
  });
});

/** Opens and fully loads a backend that follows its space, collecting what other writers commit. */
async function follower(space: string): Promise<{ b: EtcdBackend; seen: RemoteChange[][] }> {
  const b = await backend(space);
  for await (const page of b.range('')) void page;
  const seen: RemoteChange[][] = [];
  b.follow((changes) => seen.push(changes));
  return { b, seen };
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('EtcdBackend shared by two writers', () => {
  it("delivers the other writer's commits in order, with the resourceVersions it stored, and not its own", async () => {
    const a = await follower('shared-order');
    const b = await follower('shared-order');
    await a.b.commit([{ key: 'k/1', value: 'one' }], 1);
    await a.b.commit(
      [
        { key: 'k/2', value: 'two' },
        { key: 'k/1', value: undefined, rv: 2 },
      ],
      3,
    );
    await until('two commits on b', () => b.seen.length === 2);
    assert.deepEqual(b.seen, [
      [{ key: 'k/1', value: 'one', rv: 1 }],
      [
        { key: 'k/2', value: 'two', rv: 3 },
        { key: 'k/1', value: undefined, rv: 2 },
      ],
    ]);
    await b.b.commit([{ key: 'k/3', value: 'three' }], 4);
    await until("b's commit on a", () => a.seen.length === 1);
    assert.deepEqual(a.seen, [[{ key: 'k/3', value: 'three', rv: 4 }]]);
    assert.equal(b.seen.length, 2, 'a writer is not told its own commits');
  });

  it("refuses a commit based on state older than the other writer's commit, after delivering that commit", async () => {
    const a = await follower('shared-conflict');
    const b = await follower('shared-conflict');
    for (let round = 0; round < 20; round++) {
      // whether b's watch has delivered a's write when b commits decides the outcome, so the
      // outcome is checked against what b had been told at that moment (the call is synchronous up to the txn)
      await a.b.commit([{ key: 'k/x', value: `a${round}` }], 100 + 2 * round);
      const knew = b.seen.some((c) => c.some((x) => x.value === `a${round}`));
      const r = await b.b.commit([{ key: 'k/x', value: `b${round}` }], 101 + 2 * round).then(
        () => 'ok',
        (e: unknown) => e,
      );
      if (knew) assert.equal(r, 'ok', `round ${round}: b knew a's write`);
      else {
        assert.ok(r instanceof CommitConflict, `round ${round}: b's stale write must be refused, got ${String(r)}`);
        assert.ok(
          b.seen.some((c) => c.some((x) => x.value === `a${round}`)),
          'the winning commit was delivered before the refusal',
        );
        await b.b.commit([{ key: 'k/x', value: `b${round}` }], 101 + 2 * round);
      }
      await until(`a sees b${round}`, () => a.seen.some((c) => c.some((x) => x.value === `b${round}`)));
    }
    assert.equal(await raw.get('/t/shared-conflict/k/x').string(), 'b19');
  });

  it('lets exactly one of two racing creates of one key win', async () => {
    const a = await follower('shared-race');
    const b = await follower('shared-race');
    const results = await Promise.allSettled([
      a.b.commit([{ key: 'k/r', value: 'a' }], 20),
      b.b.commit([{ key: 'k/r', value: 'b' }], 21),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results));
    const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.ok(loser.reason instanceof CommitConflict);
  });
});

describe('EtcdBackend follower re-list', () => {
  it('re-lists when its watch revision was compacted: delivers the difference, then follows and commits again', async () => {
    const a = await follower('relist');
    await a.b.commit([{ key: 'k/1', value: 'one' }], 1);
    const b = await backend('relist');
    for await (const page of b.range('')) void page;
    await a.b.commit(
      [
        { key: 'k/2', value: 'two' },
        { key: 'k/1', value: undefined, rv: 3 },
      ],
      3,
    );
    await a.b.commit([{ key: 'k/2', value: 'two again' }], 4);
    const current = Number((await raw.kv.range({ key: Buffer.from('/t/relist/') })).header.revision);
    await raw.kv.compact({ revision: current, physical: true });
    const seen: RemoteChange[][] = [];
    b.follow((changes) => seen.push(changes));
    await until('the re-list', () => seen.length === 1);
    assert.deepEqual(
      seen[0]!.sort((x, y) => x.key.localeCompare(y.key)),
      [
        { key: 'k/1', value: undefined, rv: 4 },
        { key: 'k/2', value: 'two again', rv: 4 },
      ],
    );
    // b's state is current: its commit on top succeeds, and a (following) receives it
    await b.commit([{ key: 'k/3', value: 'three' }], 5);
    await until('a sees k/3', () => a.seen.some((c) => c.some((x) => x.key === 'k/3')));
    await a.b.commit([{ key: 'k/4', value: 'four' }], 6);
    await until('b follows again after the re-list', () => seen.some((c) => c.some((x) => x.key === 'k/4')));
  });
});

describe('Compactor', () => {
  it('compacts to the revision seen one round earlier; a second server skips a claimed round', async () => {
    const key = Buffer.from('/c/compact_rev_key');
    const a = new Compactor(raw, key, 60_000);
    const b = new Compactor(raw, key, 60_000);
    assert.equal(await a.tick(), 0, 'first round only records the revision');
    await raw.put('/c/x').value('1');
    const before = Number((await raw.kv.range({ key: Buffer.from('/c/x') })).header.revision);
    assert.equal(await b.tick(), 0, 'b lost the race for this round and follows a');
    const target = await a.tick();
    assert.ok(target > 0 && target < before, `compacted to ${target}`);
    await assert.rejects(raw.kv.range({ key: Buffer.from('/c/x'), revision: target - 1 }), /compacted/);
    const current = await raw.kv.range({ key: Buffer.from('/c/x') });
    assert.equal(current.kvs[0]?.value.toString(), '1', 'the current state is kept');
  });
});
