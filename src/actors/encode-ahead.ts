/**
 * The actor's idle hook for Protobuf item bytes encoded ahead of a large collection's first
 * Protobuf LIST (codec/protobuf/encode-ahead.ts; issue 24 item 7). After a batch's execution
 * (Shard.run), one step is scheduled for the event loop's check phase: by then the messages that
 * had arrived (the next batch among them) have been handled, so the step runs where the actor
 * would otherwise wait on its commits. A step takes the helper's answers and writes at most two
 * chunks of texts (≈ 0.15–0.25 ms each); it never waits for the helper, which runs at the lowest
 * priority. An actor with no task in flight blocks in piscina's Atomics.wait, so answers that
 * arrive then are taken at the next batch.
 */
import { encodeAhead } from '../codec/protobuf/encode-ahead.js';
import type { TypeCache } from '../storage/cacher/type-cache.js';

export class EncodeAhead {
  private scheduled = false;
  /** steps run (tests, diagnostics) */
  steps = 0;

  constructor(private readonly caches: () => Iterable<TypeCache>) {}

  /** A batch was executed: one step at the loop's next check phase (one at a time). */
  poke(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.step();
    });
  }

  /** Takes the answers, and sends the waiting entries of each large collection while slots are free. */
  step(): void {
    this.steps++;
    for (const c of this.caches()) {
      const source = c.aheadSource();
      if (source) encodeAhead(source);
    }
  }
}
