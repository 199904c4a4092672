/**
 * A batch's commit reaches LMDB's writer while the shard actor executes the next batch: lmdb-js
 * closes a transaction's block only at the calling thread's next check phase (setImmediate), so
 * an execution run first held the commit back by its whole length (the writer idle meanwhile).
 * A reader on another thread (its own read transactions on the same files) watches the stored
 * revision while the actor's thread is busy executing the second batch.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Shard } from '../../src/actors/shard.js';
import type { BatchReply, Op } from '../../src/actors/protocol.js';
import type { LmdbBackend } from '../../src/storage/lmdb/lmdb-backend.js';
import { configMapOps, shardConfig } from '../helpers/shard.js';

const SPIN_LIMIT_MS = 10_000;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A thread that polls the store's revision at path (bounded by SPIN_LIMIT_MS) and sets seen[0]
 * to 1 once it reaches `want`; ready[0] is 1 once it has opened the store.
 */
function watchRevision(path: string, want: number): { seen: Int32Array; ready: Int32Array; done: Promise<void> } {
  const shared = new SharedArrayBuffer(8);
  const seen = new Int32Array(shared, 0, 1);
  const ready = new Int32Array(shared, 4, 1);
  const options = new URL('../../src/storage/lmdb/store-options.js', import.meta.url).href;
  const worker = new Worker(
    `const { workerData: w } = require('node:worker_threads');
     (async () => {
       const { open } = await import('lmdb');
       const { storeOptions } = await import(w.options);
       const db = open(storeOptions(w.path));
       Atomics.store(w.ready, 0, 1);
       const end = Date.now() + w.limit;
       while (Date.now() < end) {
         db.resetReadTxn();
         if (Number(db.get('\\u0000meta/revision') ?? 0) >= w.want) { Atomics.store(w.seen, 0, 1); break; }
       }
       await db.close();
     })();`,
    { eval: true, workerData: { path, want, options, seen, ready, limit: SPIN_LIMIT_MS } },
  );
  const done = new Promise<void>((resolve, reject) => {
    worker.once('exit', () => resolve());
    worker.once('error', reject);
  });
  return { seen, ready, done };
}

/** Spins (the actor's thread busy) until flag[0] is 1 or SPIN_LIMIT_MS passed; whether it was. */
function spinUntil(flag: Int32Array): boolean {
  const end = Date.now() + SPIN_LIMIT_MS;
  while (Date.now() < end) if (Atomics.load(flag, 0) === 1) return true;
  return false;
}

test("a batch's commit is written while the next batch executes", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-handover-'));
  dirs.push(dir);
  const shard = new Shard(shardConfig(dir));
  await shard.init();
  const inside = shard as unknown as { backend: LmdbBackend; execute: (ops: Op[]) => unknown };
  const path = join(dir, 'shard-0-of-1');
  const first = configMapOps.create('first');
  const reply0 = await shard.run([configMapOps.create('zero')]);
  const rv0 = reply0.events[0]!.rv;
  const watcher = watchRevision(path, rv0 + 1);
  const waitReady = (): Promise<void> =>
    Atomics.load(watcher.ready, 0) === 1 ? Promise.resolve() : new Promise((r) => setTimeout(r, 5)).then(waitReady);
  await waitReady();
  // the second batch's execution holds the actor's thread until the reader sees the first commit
  const execute = inside.execute.bind(shard);
  let sawFirstWhileBusy: boolean | undefined;
  inside.execute = (ops) => {
    if (ops[0]!.id !== first.id) sawFirstWhileBusy = spinUntil(watcher.seen);
    return execute(ops);
  };
  // the second batch arrives in the turn the first one's commit was queued in (as a piscina
  // task whose message comes in while the first batch waited for the one before it)
  const commit = inside.backend.commit.bind(inside.backend);
  let b: Promise<BatchReply> | undefined;
  inside.backend.commit = (writes, revision, written) => {
    const queued = commit(writes, revision, written);
    b ??= shard.run([configMapOps.create('second')]);
    return queued;
  };
  const a = shard.run([first]);
  await a;
  assert.ok(b);
  const [ra, rb] = await Promise.all([a, b]);
  await watcher.done;
  assert.equal(sawFirstWhileBusy, true, "the first batch's commit waited for the second batch's execution");
  assert.deepEqual(
    [...ra.events, ...rb.events].map((e) => [e.name, e.rv]),
    [
      ['first', rv0 + 1],
      ['second', rv0 + 2],
    ],
  );
  await inside.backend.close();
});
