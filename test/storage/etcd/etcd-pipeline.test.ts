/**
 * Pipelined etcd commits: a commit started while the one before is in flight (the shard calls
 * the next commit from the one before's written()) compares the revision record's value with
 * what that one wrote. It commits after it, or is refused when that one is; a key both write
 * waits for the first; and a shard on etcd runs a refused pair of batches again, in order,
 * with no write lost or doubled.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { EtcdBackend } from '../../../src/storage/etcd/etcd-backend.js';
import type { TxnCaller } from '../../../src/storage/etcd/txn-call.js';
import { CommitConflict, type Backend, type RemoteChange, type Write } from '../../../src/storage/interface.js';
import type { EtcdConfig } from '../../../src/storage/etcd/etcd-client.js';
import { Shard } from '../../../src/actors/shard.js';
import type { BatchReply, Result } from '../../../src/actors/protocol.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { configMapOps, shardConfig } from '../../helpers/shard.js';
import { until } from '../../helpers/poll.js';

let etcd: TestEtcd;
let raw: Etcd3;
let cfg: EtcdConfig;
const open: { close(): Promise<void> }[] = [];

before(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.url });
  cfg = { servers: [etcd.url], prefix: '/p', compactionIntervalMs: 0 };
});
after(async () => {
  for (const b of open) await b.close();
  raw?.close();
  await etcd?.cleanup();
});

/** A backend as the shard opens it (pipelined, fully loaded, following its space). */
async function follower(space: string): Promise<{ b: EtcdBackend; seen: RemoteChange[][] }> {
  const b = new EtcdBackend(cfg, space, { pipeline: true });
  open.push(b);
  await b.open();
  for await (const page of b.range('')) void page;
  const seen: RemoteChange[][] = [];
  b.follow((changes) => seen.push(changes));
  return { b, seen };
}

/** Commits first, and second from first's written() (before first's answer), as Shard.settle does. */
async function pipelined(
  b: Backend,
  first: [Write[], number],
  second: [Write[], number],
): Promise<[PromiseSettledResult<void>, PromiseSettledResult<void>]> {
  let secondCommit: Promise<PromiseSettledResult<void>[]> | undefined;
  const [r1] = await Promise.allSettled([
    b.commit(first[0], first[1], () => {
      secondCommit ??= Promise.allSettled([b.commit(second[0], second[1])]);
    }),
  ]);
  assert.ok(secondCommit, "the first commit's written() ran");
  const [r2] = await secondCommit;
  return [r1!, r2!];
}

/** The caller of the backend's transactions that write (its reads after a refusal go through etcd3). */
function callerOf(b: EtcdBackend): TxnCaller {
  return (b as unknown as { caller: TxnCaller }).caller;
}

/**
 * Wraps the backend's etcd transactions that write: the first one runs `first` before it goes out (once
 * built: what it compares is fixed), and returns the number of transactions sent so far.
 */
function beforeFirstTxn(b: EtcdBackend, first: () => Promise<unknown>): () => number {
  const caller = callerOf(b);
  const txn = caller.txn.bind(caller);
  let calls = 0;
  caller.txn = async (bytes, timeoutMs) => {
    if (++calls === 1) await first();
    return txn(bytes, timeoutMs);
  };
  return () => calls;
}

/** Counts the backend's reads after a refusal (its etcd3 Txns: the record and keys that moved). */
function countReadsAfterRefusal(b: EtcdBackend): () => number {
  const kv = (b as unknown as { client: Etcd3 }).client.kv;
  const txn = kv.txn.bind(kv);
  let n = 0;
  kv.txn = (req, opts) => {
    n++;
    return txn(req, opts);
  };
  return () => n;
}

async function value(key: string): Promise<string | null> {
  return raw.get(key).string();
}

describe('EtcdBackend pipelined commits', () => {
  it('commits a commit sent before the answer of the one before after it; another server sees both in order', async () => {
    const a = await follower('order');
    const other = await follower('order');
    const [r1, r2] = await pipelined(a.b, [[{ key: 'k/1', value: 'one' }], 1], [[{ key: 'k/2', value: 'two' }], 2]);
    assert.equal(r1.status, 'fulfilled');
    assert.equal(r2.status, 'fulfilled', r2.status === 'rejected' ? String(r2.reason) : '');
    const one = await raw.get('/p/order/k/1').exec();
    const two = await raw.get('/p/order/k/2').exec();
    assert.ok(Number(one.kvs[0]!.mod_revision) < Number(two.kvs[0]!.mod_revision), 'the first commits first');
    // the record carries a token of the transaction that wrote it (what the second compared)
    const record = JSON.parse((await value('/p/order/\u0000meta/revision')) ?? '') as { rv: number; w?: string };
    assert.equal(record.rv, 2);
    assert.match(record.w ?? '', /^[\w-]+\.\d+$/);
    await until(async () => (other.seen.length === 2 ? true : undefined), 'both commits on the other server');
    assert.deepEqual(other.seen, [[{ key: 'k/1', value: 'one', rv: 1 }], [{ key: 'k/2', value: 'two', rv: 2 }]]);
    assert.equal(a.seen.length, 0, 'a writer is not told its own commits');
  });

  it('refuses the commit sent behind a refused one, writing nothing of either; the next commit succeeds', async () => {
    const { b } = await follower('refused');
    await b.commit([{ key: 'k/base', value: 'base' }], 1);
    // written behind the backend's back once its transaction is built: its create compare fails
    const calls = beforeFirstTxn(b, () => raw.put('/p/refused/k/clash').value('etcd').exec());
    const [r1, r2] = await pipelined(
      b,
      [
        [
          { key: 'k/clash', value: 'server' },
          { key: 'k/a', value: 'a' },
        ],
        2,
      ],
      [[{ key: 'k/b', value: 'b' }], 3],
    );
    assert.equal(r1.status, 'rejected');
    assert.ok(
      r1.status === 'rejected' && r1.reason instanceof CommitConflict,
      String((r1 as { reason?: unknown }).reason),
    );
    // the second read the first's writes (in the shard): it must not commit without them
    assert.equal(r2.status, 'rejected', 'the commit built on a refused one is refused too');
    assert.ok(r2.status === 'rejected' && r2.reason instanceof CommitConflict);
    assert.equal(calls(), 2, 'the one behind is not sent again: the one ahead of it was refused');
    assert.equal(await value('/p/refused/k/a'), null);
    assert.equal(await value('/p/refused/k/b'), null);
    assert.equal(await value('/p/refused/k/clash'), 'etcd');
    // the chain starts again from the delivered state
    await b.commit([{ key: 'k/b', value: 'b' }], 4);
    assert.equal(await value('/p/refused/k/b'), 'b');
  });

  it('a transaction etcd applies before the one sent ahead of it is sent again once that one committed, with no read of what moved', async () => {
    const { b } = await follower('overtaken');
    const reads = countReadsAfterRefusal(b);
    const caller = callerOf(b);
    const txn = caller.txn.bind(caller);
    let calls = 0;
    let secondDone!: () => void;
    const second = new Promise<void>((r) => (secondDone = r));
    // the first transaction reaches etcd only after the second was answered
    caller.txn = async (bytes, timeoutMs) => {
      const n = ++calls;
      if (n === 1) await second;
      const res = await txn(bytes, timeoutMs);
      if (n === 2) secondDone();
      return res;
    };
    const [r1, r2] = await pipelined(b, [[{ key: 'k/1', value: 'one' }], 1], [[{ key: 'k/2', value: 'two' }], 2]);
    assert.equal(r1.status, 'fulfilled');
    assert.equal(r2.status, 'fulfilled', r2.status === 'rejected' ? String(r2.reason) : '');
    assert.equal(calls, 3, 'the second transaction was sent twice');
    assert.equal(reads(), 0, 'its compares decided again: no read of the record and keys after the refusal');
    const [one, two] = await Promise.all(['k/1', 'k/2'].map((k) => raw.get(`/p/overtaken/${k}`).exec()));
    assert.ok(Number(one!.kvs[0]!.mod_revision) < Number(two!.kvs[0]!.mod_revision), 'in the order sent');
  });

  it('a commit writing a key the one in flight writes waits for it, then compares its new mod_revision', async () => {
    const { b } = await follower('same-key');
    const [r1, r2] = await pipelined(
      b,
      [[{ key: 'k/x', value: 'created' }], 1],
      [
        [
          { key: 'k/x', value: 'updated' },
          { key: 'k/y', value: 'y' },
        ],
        2,
      ],
    );
    assert.equal(r1.status, 'fulfilled');
    assert.equal(r2.status, 'fulfilled', r2.status === 'rejected' ? String(r2.reason) : '');
    assert.equal(await value('/p/same-key/k/x'), 'updated');
    // and the known mod_revision is the second's: a third commit of the key succeeds
    await b.commit([{ key: 'k/x', value: 'third' }], 3);
    assert.equal(await value('/p/same-key/k/x'), 'third');
  });
});

const { create, patch } = configMapOps;

function code(r: Result | undefined): number {
  assert.ok(r);
  return 'error' in r ? r.error.code : 'code' in r ? r.code : 0;
}

describe('Shard on etcd: pipelined batches', () => {
  it('a batch sent behind one whose transaction is refused runs again after it: answers in order, no write lost or doubled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plat-etcd-pipe-'));
    const shard = new Shard({
      ...shardConfig(dir),
      storageBackend: 'etcd3',
      etcd: { servers: [etcd.url], prefix: '/shard', compactionIntervalMs: 0 },
    });
    await shard.init();
    const backend = (shard as unknown as { backend: EtcdBackend }).backend;
    open.push(backend);
    const NS = 'pipe';
    // the clash's key, as the shard writes it
    const probe = await shard.run([create('probe', NS)]);
    assert.equal(code(probe.results[0]), 201);
    const keys = await raw.getAll().prefix('/shard/').keys();
    const probeKey = keys.find((k) => k.endsWith(`/${NS}/probe`));
    assert.ok(probeKey, keys.join(', '));
    // the first batch's transaction meets the clash, written once it is built (the cache cannot know it)
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'clash', namespace: NS, uid: 'u', resourceVersion: '1' },
    };
    const calls = beforeFirstTxn(backend, () =>
      raw
        .put(probeKey.slice(0, -'probe'.length) + 'clash')
        .value(JSON.stringify(body))
        .exec(),
    );
    const order: string[] = [];
    const noted = (name: string) => (r: BatchReply) => {
      order.push(name);
      return r;
    };
    const first = shard.run([create('clash', NS), create('a', NS)]).then(noted('first'));
    // executed over the first's staged writes (it patches a), sent before the first's answer
    const second = shard.run([create('b', NS), patch('a', NS)]).then(noted('second'));
    const [r1, r2]: [BatchReply, BatchReply] = await Promise.all([first, second]);
    assert.deepEqual(order, ['first', 'second']);
    assert.ok(calls() >= 4, `both batches committed again after the refusal (${calls()} transactions)`);
    assert.equal(code(r1.results[0]), 409, 'the clash, run again, meets the key written behind the back');
    assert.equal(code(r1.results[1]), 201);
    assert.equal(code(r2.results[0]), 201);
    assert.equal(code(r2.results[1]), 200);
    // events: the clash (another writer's), then a, b, a patched: each once, versions rising
    const events = [...r1.events, ...r2.events].map((e) => `${e.type} ${e.name}`);
    assert.deepEqual(events, ['ADDED clash', 'ADDED a', 'ADDED b', 'MODIFIED a']);
    const rvs = [...r1.events, ...r2.events].map((e) => e.rv);
    assert.deepEqual(
      rvs,
      [...rvs].sort((x, y) => x - y),
      `versions in order: ${rvs.join(', ')}`,
    );
    const stored = await raw.getAll().prefix(probeKey.slice(0, -'probe'.length)).strings();
    assert.deepEqual(
      Object.keys(stored)
        .map((k) => k.slice(k.lastIndexOf('/') + 1))
        .sort(),
      ['a', 'b', 'clash', 'probe'],
    );
    assert.equal(JSON.parse(Object.entries(stored).find(([k]) => k.endsWith('/a'))![1]).data.k, 'patched');
    rmSync(dir, { recursive: true, force: true });
  });
});
