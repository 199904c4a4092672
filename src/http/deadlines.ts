/**
 * One timer for the deadlines of many long-lived streams (watch timeouts): each stream costs an
 * entry in a set, not a Timeout object and its closure, and an idle watcher holds no timer of
 * its own. Deadlines are rounded up to the next tick (TICK_MS), so a stream ends at most one
 * tick after its deadline, never before.
 */

/** What a deadline ends. */
export interface Expiring {
  expire(): void;
}

export const TICK_MS = 100;

export class Deadlines {
  /** by tick number (deadline / TICK_MS, rounded up): the streams ending then */
  private readonly slots = new Map<number, Set<Expiring>>();
  private readonly slotOf = new Map<Expiring, number>();
  private timer: NodeJS.Timeout | undefined;

  /** now: a monotonic clock in ms (deadlines are on the same clock) */
  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.slotOf.size;
  }

  /** Calls e.expire() once, at the first tick at or after `atMs` (unless removed first). */
  add(e: Expiring, atMs: number): void {
    this.remove(e);
    const slot = Math.ceil(atMs / TICK_MS);
    let set = this.slots.get(slot);
    if (!set) this.slots.set(slot, (set = new Set()));
    set.add(e);
    this.slotOf.set(e, slot);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), TICK_MS);
      // the streams keep the process alive, not their deadlines
      this.timer.unref();
    }
  }

  remove(e: Expiring): void {
    const slot = this.slotOf.get(e);
    if (slot === undefined) return;
    this.slotOf.delete(e);
    const set = this.slots.get(slot)!;
    set.delete(e);
    if (set.size === 0) this.slots.delete(slot);
    this.stopWhenEmpty();
  }

  /** Expires every entry whose tick has come (in deadline order). */
  tick(): void {
    const current = Math.floor(this.now() / TICK_MS);
    const due = [...this.slots.keys()].filter((s) => s <= current).sort((a, b) => a - b);
    for (const slot of due) {
      const set = this.slots.get(slot)!;
      this.slots.delete(slot);
      for (const e of set) {
        this.slotOf.delete(e);
        e.expire();
      }
    }
    this.stopWhenEmpty();
  }

  private stopWhenEmpty(): void {
    if (this.slotOf.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The deadlines of the watch streams of this thread. */
export const watchDeadlines = new Deadlines();
