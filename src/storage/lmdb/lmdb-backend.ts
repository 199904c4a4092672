import { IF_EXISTS, open, type Database, type RootDatabase } from 'lmdb';
import { EarlierCommitFailed, type Backend, type StoredEntry, type Write } from '../interface.js';
import { DICTIONARY } from './dictionary.js';
import { DictionaryCompressor } from './lz4-dict.js';
import { COMPRESSION_THRESHOLD, storeOptions } from './store-options.js';

const REVISION_KEY = '\u0000meta/revision';
/** the backend's own keys (never returned by range) */
const META_PREFIX = '\u0000meta/';
/** chain tokens: each transaction removes the one before's and writes its own (see commit) */
const TOKEN_PREFIX = '\u0000meta/commit/';
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
  /**
   * The same (root) database without lmdb-js's compression: commits put the values they
   * compressed themselves through it (lmdb-js would compress a value starting with its marker
   * byte again); reads go through db, which decompresses them as its own.
   */
  private readonly raw: Database<Buffer | string, string>;
  private readonly compressor = new DictionaryCompressor(DICTIONARY);
  /** settles once the commits queued in this event-loop turn reached lmdb-js's write thread */
  private handover: Promise<void> | undefined;
  /** the token of the last transaction queued (the next one is conditional on it) */
  private chainTip: string | undefined;
  /** the token of the last transaction known committed (a broken chain restarts from it) */
  private committedTip: string | undefined;
  /** bumped when the chain restarts: the failures of transactions queued before are old news */
  private generation = 0;
  private tokens = 0;

  constructor(path: string) {
    this.db = open<string, string>(storeOptions(path));
    // name null is the root database (lmdb-js accepts it; its typings only name named ones)
    const root = null as unknown as string;
    this.raw = this.db.openDB<Buffer | string, string>(root, { compression: false, encoding: 'binary' });
    // normally one token; a store built by --reshard may hold several (any one that exists will do)
    for (const key of this.db.getKeys({ start: TOKEN_PREFIX, end: TOKEN_PREFIX + '\uffff' })) {
      if (typeof key !== 'string' || !key.startsWith(TOKEN_PREFIX)) continue;
      this.committedTip = this.chainTip = key;
      this.tokens = Math.max(this.tokens, Number(key.slice(TOKEN_PREFIX.length)) || 0);
    }
  }

  /** Local and opened by the constructor: nothing to connect. */
  async open(): Promise<void> {}

  async *range(prefix: string): AsyncIterable<StoredEntry[]> {
    // Large pages: one await per page keeps the start-up load synchronous in effect.
    let page: StoredEntry[] = [];
    for (const { key, value } of this.db.getRange({ start: prefix, end: prefix + '\uffff' })) {
      if (typeof key !== 'string' || !key.startsWith(prefix) || key.startsWith(META_PREFIX)) continue;
      page.push({ key, value });
      if (page.length === PAGE) {
        yield page;
        page = [];
      }
    }
    if (page.length) yield page;
  }

  async commit(writes: Write[], revision: number, written?: () => void): Promise<void> {
    // One transaction: all writes, the revision and the chain token land together or not at
    // all. `batch` / `ifVersion` queue them as one block of write instructions that lmdb-js's
    // write thread executes and commits in one transaction (no B-tree put on this thread).
    // The transaction is conditional on the token of the one queued before it (IF_EXISTS), so
    // it can be queued before that one is known committed (lmdb-js resolves a commit only after
    // its fsync): if that one failed, its token was never written and this one is skipped
    // (resolves false), and so is every later one; the chain then restarts from the last
    // committed token ("Creates and applies, sixth round" in docs/benchmarks.md).
    const prev = this.chainTip;
    const generation = this.generation;
    const token = TOKEN_PREFIX + String(++this.tokens).padStart(12, '0');
    const block = (): void => {
      if (prev !== undefined) void this.db.remove(prev);
      void this.db.put(token, '1');
      for (const w of writes) {
        if (w.value === undefined) void this.db.remove(w.key);
        else void this.raw.put(w.key, this.stored(w.value));
      }
      void this.db.put(REVISION_KEY, String(revision));
    };
    const committed = prev === undefined ? this.db.batch(block) : this.db.ifVersion(prev, IF_EXISTS, block);
    this.chainTip = token;
    // This transaction's flush, taken now: lmdb-js's `flushed` answers for the newest writes
    // queued when its `then` runs, and the next batch's transaction is queued as soon as
    // written() below lets it, so a flush taken after the commit was the next batch's too.
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
    // ordered: a later commit may be queued now, and commits only if this one did
    written?.();
    // a failed transaction, or one skipped because one queued before it failed
    let failure: { e: unknown } | undefined;
    try {
      if ((await committed) === false)
        failure = { e: new EarlierCommitFailed('not committed: a commit queued before it failed') };
    } catch (e) {
      failure = { e };
    }
    if (failure) {
      flushed.catch(() => {});
      this.restartChain(generation);
      throw failure.e;
    }
    this.committedTip = token;
    // Acknowledge only once the transaction is on disk (acknowledged = synced).
    await flushed;
  }

  /**
   * A value as the store keeps it: at or over the threshold, LZ4-compressed against the
   * dictionary here, on the calling thread, in lmdb-js's own format (src/storage/lmdb/lz4-dict.ts),
   * instead of by lmdb-js in a libuv work item per value; as it is when shorter, or when
   * compressing does not shorten it (JSON never starts with the marker byte, so it reads back as is).
   */
  private stored(value: string): Buffer | string {
    // a UTF-16 length under a third of the threshold is under it in UTF-8 bytes too
    return value.length * 3 >= COMPRESSION_THRESHOLD
      ? (this.compressor.compress(value, COMPRESSION_THRESHOLD) ?? value)
      : value;
  }

  /** After a failed transaction, later ones chain from the last committed token (once per failure). */
  private restartChain(generation: number): void {
    if (generation !== this.generation) return;
    this.generation++;
    this.chainTip = this.committedTip;
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
