import { open, type RootDatabase } from 'lmdb';
import type { Backend, StoredEntry, Write } from '../interface.js';

const REVISION_KEY = '\u0000meta/revision';

/** LMDB backend: one environment per shard, synchronous-durable commits batched per call. */
export class LmdbBackend implements Backend {
  private readonly db: RootDatabase<string, string>;

  constructor(path: string) {
    // encoding 'string': values are already-encoded JSON; no msgpack round trip.
    this.db = open<string, string>({ path, encoding: 'string', compression: false });
  }

  *range(prefix: string): Iterable<StoredEntry> {
    for (const { key, value } of this.db.getRange({ start: prefix, end: prefix + '\uffff' })) {
      if (typeof key === 'string' && key.startsWith(prefix)) yield { key, value };
    }
  }

  async commit(writes: Write[], revision: number): Promise<void> {
    // One transaction: all writes and the revision land together or not at all.
    await this.db.transaction(() => {
      for (const w of writes) {
        if (w.value === undefined) this.db.removeSync(w.key);
        else this.db.putSync(w.key, w.value);
      }
      this.db.putSync(REVISION_KEY, String(revision));
    });
  }

  revision(): number {
    const v = this.db.get(REVISION_KEY);
    return v ? Number(v) : 0;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
