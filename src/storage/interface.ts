/**
 * The narrow backend interface under the watch cache. A backend stores encoded objects by key
 * and commits batches atomically and durably; the revision of a write is the resourceVersion.
 * LMDB implements it for one machine; an etcd backend implements the same contract.
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
  /** Every stored entry whose key starts with prefix, in key order. Called at start-up. */
  range(prefix: string): Iterable<StoredEntry>;
  /**
   * Commits the writes atomically together with the new revision. Resolves only once the
   * data is on disk: an acknowledged write must survive kill -9.
   */
  commit(writes: Write[], revision: number): Promise<void>;
  /** The highest revision ever committed through this backend (0 when empty). */
  revision(): number;
  close(): Promise<void>;
}
