/**
 * The actor's idle hook for Protobuf item bytes encoded ahead of a large collection's first
 * Protobuf LIST (codec/protobuf/encode-ahead.ts; issue 24 item 7). After a batch's execution
 * (Shard.run), one step is scheduled for the event loop's check phase: by then the messages that
 * had arrived (the next batch among them) have been handled, so the step runs where the actor
 * would otherwise wait on its commits. A step takes the helper's answers and writes at most two
 * chunks of texts (≈ 0.15–0.25 ms each); it never waits for the helper, which runs at the lowest
 * priority. An actor with no task in flight blocks in piscina's Atomics.wait, so answers that
 * arrive then are taken at the next batch.
 *
 * The actor's own writes come first: steps send items at RATE per second at most (a budget
 * refilled with time, at most two chunks' worth). The machine's idle CPU (the gate in
 * encode-ahead.ts) is not enough: a closed loop of creates (the create bench: 64 connections,
 * ≈ 13,000 ConfigMaps/s) leaves a quarter of two cores idle between its batches, yet sending
 * whatever that allowed (the actor's ≈ 4 µs per item, the helper's encoding) cost it 15–25% of
 * its rate (docs/benchmarks.md, "Protobuf first list, tenth round"); nor is the actor's own busy
 * share (its executions took ≈ 20–30% of the time in both that load and the density scenario's
 * create phase). At RATE the encoding keeps up with the density scenario's ≈ 2,000 Pod creates/s
 * for ≈ 1% of a core on the actor and ≈ 3% in the helper, whatever the load.
 */
import { AHEAD_CHUNK, aheadStats, encodeAhead } from '../codec/protobuf/encode-ahead.js';
import type { TypeCache } from '../storage/cacher/type-cache.js';

/** items sent per second at most */
export const RATE = 2500;
/** the budget's cap: two chunks */
const MAX_BUDGET = 2 * AHEAD_CHUNK;

export class EncodeAhead {
  private scheduled = false;
  /** steps run (tests, diagnostics) */
  steps = 0;
  /** items that may be sent now (refilled at RATE per second), and when it was last refilled */
  private budget = MAX_BUDGET;
  private refilled = performance.now();

  constructor(private readonly caches: () => Iterable<TypeCache>) {}

  /**
   * A batch was executed: one step at the loop's next check phase (one at a time), once the
   * budget holds a chunk. `now` for tests.
   */
  poke(now = performance.now()): void {
    this.budget = Math.min(MAX_BUDGET, this.budget + ((now - this.refilled) * RATE) / 1000);
    this.refilled = now;
    if (this.scheduled || this.budget < AHEAD_CHUNK) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.step();
    });
  }

  /** Takes the answers, and sends the waiting entries of each large collection while slots are free (charged to the budget). */
  step(): void {
    this.steps++;
    const sent = aheadStats.sent;
    for (const c of this.caches()) {
      const source = c.aheadSource();
      if (source) encodeAhead(source);
    }
    this.budget -= aheadStats.sent - sent;
  }
}
