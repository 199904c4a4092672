/**
 * What the generic store needs from its shard while serving one batch: committed reads,
 * staged writes that later operations of the same batch see, and revisions.
 */
import type { Entry, TypeCache } from '../storage/cacher/type-cache.js';

export interface StagedWrite {
  typeKey: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  entry: Entry;
  /**
   * The write's storage lease (kinds with a TTL): when the object expires (ms since the
   * epoch); 0 on a DELETED write, whose lease goes with the object.
   */
  expiresAt?: number;
}

export interface Txn {
  /** wall clock of this batch (ms) */
  readonly now: number;
  /** committed state plus writes staged earlier in this batch */
  read(cache: TypeCache, typeKey: string, namespace: string, name: string): Entry | undefined;
  /** allocates the next global resourceVersion */
  nextRV(): number;
  /** the newest resourceVersion allocated so far */
  currentRV(): number;
  stage(w: StagedWrite): void;
  /** writes staged so far for a type: entry key -> entry (undefined = deleted) */
  staged(typeKey: string): Map<string, Entry | undefined>;
}
