/**
 * The narrow backend interface under the watch cache. A backend stores encoded objects by key
 * and commits batches atomically and durably; the revision of a write is the resourceVersion.
 * LMDB implements it for one machine; the etcd backend (src/storage/etcd) implements the same
 * contract, and test/storage/backend-conformance.test.ts runs one suite against both.
 *
 * Keys are `<group>/<resource>/<namespace>/<name>`, so a type or a namespace is a range.
 */
export interface StoredEntry {
  key: string;
  value: string;
}

export interface Write {
  key: string;
  /** encoded object; undefined deletes the key */
  value: string | undefined;
  /** the resourceVersion of a delete (a shared store tells other readers; see RemoteChange) */
  rv?: number;
}

/**
 * A change committed to a shared store by another writer (another API server on the same
 * etcd prefix). value undefined is a delete; rv is the resourceVersion its writer gave it.
 */
export interface RemoteChange {
  key: string;
  value: string | undefined;
  rv: number;
}

/**
 * A shared store refused a commit because another writer committed to the same key space
 * since the state this backend delivered (optimistic concurrency). By the time it is thrown,
 * that writer's changes have been delivered through follow(): the batch can be run again.
 */
/**
 * The store cannot be reached or did not answer in time (etcd without quorum, all members
 * down): the request fails with 503 (unavailable) or 504 (timeout) instead of waiting.
 */
export class StoreUnavailable extends Error {
  constructor(
    message: string,
    readonly timeout: boolean,
  ) {
    super(message);
  }
}

/**
 * A commit the backend did not store because a commit queued before it failed (LMDB queues a
 * transaction before the one before is known committed, conditional on it): nothing of it is
 * stored, and the shard runs its batch again once every earlier batch is settled.
 */
export class EarlierCommitFailed extends Error {}

export class CommitConflict extends Error {
  /**
   * rev: the store revision of the commit that won (for the backend's own catch-up); keys: the
   * written keys whose own compare failed (a writer that changed them without the space's
   * revision record), empty when only the record moved
   */
  constructor(
    message: string,
    readonly rev = 0,
    readonly keys: readonly string[] = [],
  ) {
    super(message);
  }
}

export interface Backend {
  /**
   * Connects (when remote) and reads the stored revision. Called once, before any other
   * method; rejects when the store cannot be reached.
   */
  open(): Promise<void>;
  /**
   * Every stored entry whose key starts with prefix, in key order, as pages read at one point
   * in time (a remote store is read in bounded pages; LMDB yields large synchronous pages, so
   * the per-page await costs nothing measurable). Called at start-up. The backend's own
   * bookkeeping (the revision) is never returned.
   */
  range(prefix: string): AsyncIterable<StoredEntry[]>;
  /**
   * Commits the writes together with the new revision: each write is atomic, and the revision
   * is stored with (never before) the writes. Resolves only once the data is durable: an
   * acknowledged write must survive kill -9. LMDB commits one transaction; etcd one
   * transaction when the batch fits its request limits, else a sequence (docs/etcd.md).
   * written (optional): called once the writes are ordered in the store but before they are
   * durable, when the backend can tell (LMDB: the transaction is queued, and a later one commits
   * only if this one did, else it rejects with EarlierCommitFailed; etcd: the transaction is
   * sent, and a later one commits only if this one did); a later commit may start then, and
   * becomes durable no earlier than this one.
   */
  commit(writes: Write[], revision: number, written?: () => void): Promise<void>;
  /** The highest revision ever committed through this backend (0 when empty). */
  revision(): number;
  /**
   * Shared stores only (etcd): delivers, in commit order and one call per foreign commit, the
   * changes other writers commit after the snapshot range('') read. A commit may then reject
   * with CommitConflict. LMDB has one writer and leaves it out.
   */
  follow?(onChanges: (changes: RemoteChange[]) => void): void;
  /**
   * Shared stores: resolves once every commit to this key space that completed before the
   * call has been delivered through follow(), so a read after it is consistent (upstream's
   * consistent reads from the watch cache). Rejects with StoreUnavailable.
   */
  sync?(): Promise<void>;
  /**
   * Local stores whose writer starts a queued commit only at a later turn of this thread's event
   * loop (LMDB: lmdb-js closes the transaction's block in a setImmediate): a promise that settles
   * once every commit queued so far has been handed over, or undefined when none waits. A shard
   * awaits it before executing a batch, so a long execution never holds a commit back.
   */
  handedOver?(): Promise<void> | undefined;
  close(): Promise<void>;
}
