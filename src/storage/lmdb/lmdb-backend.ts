import { open, type RootDatabase } from 'lmdb';
import type { Backend, StoredEntry, Write } from '../interface.js';
import { storeOptions } from './store-options.js';

const REVISION_KEY = '\u0000meta/revision';
const PAGE = 4096;

/**
 * The flush (fsync) of the writes queued so far, as a promise of its own: `db.flushed` is a
 * thenable that picks lmdb-js's current flush promise only when its `then` is called, which
 * `await` defers to a later microtask; calling it here pins the flush of what is queued now.
 */
export function flushOf(db: RootDatabase<string, string>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    void db.flushed.then(() => resolve(), reject);
  });
}

/** LMDB backend: one environment per shard, synchronous-durable commits batched per call. */
export class LmdbBackend implements Backend {
  private readonly db: RootDatabase<string, string>;
  /** settles once the commits queued in this event-loop turn reached lmdb-js's write thread */
  private handover: Promise<void> | undefined;

  constructor(path: string) {
    this.db = open<string, string>(storeOptions(path));
  }

  /** Local and opened by the constructor: nothing to connect. */
  async open(): Promise<void> {}

  async *range(prefix: string): AsyncIterable<StoredEntry[]> {
    // Large pages: one await per page keeps the start-up load synchronous in effect.
    let page: StoredEntry[] = [];
    for (const { key, value } of this.db.getRange({ start: prefix, end: prefix + '\uffff' })) {
      if (typeof key !== 'string' || !key.startsWith(prefix) || key === REVISION_KEY) continue;
      page.push({ key, value });
      if (page.length === PAGE) {
        yield page;
        page = [];
      }
    }
    if (page.length) yield page;
  }

  async commit(writes: Write[], revision: number, written?: () => void): Promise<void> {
    // One transaction: all writes and the revision land together or not at all. `batch` queues
    // them as one block of write instructions that lmdb-js's write thread executes and commits
    // in one transaction; `transaction` would run a callback on this (the shard actor's) thread
    // inside the write thread's transaction and do every B-tree put here (≈ 14 µs of the actor's
    // thread per create, "Creates, fifth round" in docs/benchmarks.md).
    const committed = this.db.batch(() => {
      for (const w of writes) {
        if (w.value === undefined) void this.db.remove(w.key);
        else void this.db.put(w.key, w.value);
      }
      void this.db.put(REVISION_KEY, String(revision));
    });
    // This transaction's flush, taken now: lmdb-js's `flushed` answers for the newest writes
    // queued when its `then` runs, and the shard queues the next batch's transaction as soon as
    // this one is written (below), so awaiting `db.flushed` after the commit waited for the next
    // batch's commit and fsync too: every answer a batch late ("Creates and applies, sixth round").
    const flushed = flushOf(this.db);
    // lmdb-js ends the transaction's block of instructions in a setImmediate it queued in
    // `batch` (its "event turn" batch): the write thread cannot commit before it runs. Ours runs
    // right after it (setImmediate keeps the order), so handedOver() tells when that happened.
    this.handover ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.handover = undefined;
        resolve();
      }),
    );
    try {
      await committed;
    } catch (e) {
      flushed.catch(() => {});
      throw e;
    }
    // lmdb-js overlaps the fsync with later transactions: the commit promise resolves when the
    // transaction is committed, its flush once it is on disk. Acknowledge only after the latter;
    // the next transaction (written) may start before it, and one fsync may cover both.
    written?.();
    await flushed;
  }

  handedOver(): Promise<void> | undefined {
    return this.handover;
  }

  revision(): number {
    const v = this.db.get(REVISION_KEY);
    return v ? Number(v) : 0;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
