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
   */
  commit(writes: Write[], revision: number): Promise<void>;
  /** The highest revision ever committed through this backend (0 when empty). */
  revision(): number;
  close(): Promise<void>;
}
