/**
 * Periodic compaction of etcd's history, as the upstream API server does it: each tick
 * compacts to the etcd revision observed at the previous tick, so etcd keeps at least one
 * interval of history. A compare-and-swap on `compact_rev_key` (its version counts the
 * compactions) lets only one of several servers compact per interval.
 */
import type { Etcd3 } from 'etcd3';

export class Compactor {
  /** version of compact_rev_key this compactor last saw (0: the key does not exist) */
  private seenVersion = 0;
  /** the etcd revision observed at the previous tick: the next compaction target */
  private lastRevision = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Etcd3,
    private readonly key: Buffer,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.tick().catch(() => {
        /* retried next interval */
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One round: claim this interval with the CAS, then compact to the previous round's
   * revision. Returns the revision compacted to (0 when another server claimed the round or
   * there was nothing to compact yet).
   */
  async tick(): Promise<number> {
    const res = await this.client.kv.txn({
      compare: [{ key: this.key, target: 'Version', result: 'Equal', version: this.seenVersion }],
      success: [{ request_put: { key: this.key, value: Buffer.from(String(this.lastRevision)) } }],
      failure: [{ request_range: { key: this.key } }],
    });
    const target = this.lastRevision;
    this.lastRevision = Number(res.header.revision);
    if (!res.succeeded) {
      // Another server compacted this interval: follow its count and try next time.
      this.seenVersion = Number(res.responses[0]?.response_range.kvs[0]?.version ?? 0);
      return 0;
    }
    this.seenVersion++;
    if (target === 0) return 0;
    try {
      await this.client.kv.compact({ revision: target, physical: false });
    } catch (e) {
      if (!/compacted/.test((e as Error).message)) throw e; // already compacted further: fine
    }
    return target;
  }
}
