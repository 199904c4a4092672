/**
 * Lets a shard actor collect its young generation once it goes idle after a burst (issue 24
 * item 6, docs/benchmarks.md "Idle watcher memory, eighth round").
 *
 * Why: an actor's young generation is 2 × WORKER_SEMI_SPACE_MB (src/server/young-generation.ts)
 * and a piscina worker blocks in Atomics.wait between tasks, so the garbage of a burst sits in
 * it until the next burst, and that next burst, however small, pays the scavenge: it promotes
 * what survived (the actor's ~6 MB of start-up state on its first one), touching fresh
 * old-space and to-space pages. 1,000 watch opens after a 200-object fill did exactly that:
 * ≈ 9 MB of the ≈ 14 MB of RSS the watch scenario charged to its idle watchers was the
 * configmaps actor's first scavenge. Collected when idle instead, a burst's garbage is gone
 * before the next one, which then allocates into pages already resident.
 *
 * When: IDLE_MS after a shard's last batch was handled with nothing queued or in flight, if at
 * least MIN_OPS ops ran since its last collection (a lone request now and then does not cost a
 * scavenge each). Any batch sent meanwhile cancels the timer. The collection is a piscina task
 * like the snapshot (CollectRequest), answered between batches; a scavenge of the actor's
 * young generation takes ≈ 1–6 ms. A shard in its etcd poll always has a batch in flight and is
 * never collected this way (its poll wakes it regularly anyway).
 */

/** how long a shard stays idle before its actor collects (ms) */
export const IDLE_MS = 250;
/** ops since the last collection below which an idle shard is left alone */
export const MIN_OPS = 64;

export class IdleCollector<R = unknown> {
  private timer: NodeJS.Timeout | undefined;
  private ops = 0;
  /** collections asked for so far, and the last answer (tests, diagnostics) */
  collections = 0;
  last: R | undefined;

  constructor(
    private readonly collect: () => Promise<R>,
    private readonly idleMs = IDLE_MS,
    private readonly minOps = MIN_OPS,
  ) {}

  /** A batch of `ops` operations is being sent: the shard is not idle. */
  busy(ops: number): void {
    this.ops += ops;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The shard has nothing queued or in flight: collect after idleMs unless work comes first. */
  idle(): void {
    if (this.timer || this.ops < this.minOps) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ops = 0;
      this.collections++;
      // a failed collection (the worker restarting or closing) changes nothing
      this.collect().then(
        (r) => {
          this.last = r;
        },
        () => {},
      );
    }, this.idleMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
