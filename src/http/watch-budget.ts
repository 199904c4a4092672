/**
 * How much of the front thread one slice of a watch flush may take (src/http/watch-hub.ts).
 * A flush of 1,000 watchers is 1,000 sends (6–10 µs each here): written in one go it holds
 * every request, actor reply and response behind it for its whole length; in slices of about
 * SLICE_MS with I/O between them, a write's request and reply each wait one slice at most.
 */

/** Asked before each send of a flush: whether the slice may write one more. */
export interface Budget {
  more(): boolean;
}

/** Writes everything in one go (tests, and a watcher written early). */
export const UNLIMITED: Budget = { more: () => true };

/** The front-thread time of one slice of a flush (ms). */
export const SLICE_MS = 2;

/** Sends between clock reads: a send costs microseconds, a clock read a fraction of one. */
const CHECK_EVERY = 16;

/** A slice's budget: up to `until` (performance.now() ms), checked every CHECK_EVERY sends. */
export class SliceBudget implements Budget {
  private n = 0;

  constructor(private readonly until: number) {}

  more(): boolean {
    if (++this.n < CHECK_EVERY) return true;
    this.n = 0;
    return performance.now() < this.until;
  }
}
