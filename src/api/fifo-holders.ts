/**
 * Holders of something costly kept for the `max` most recent only, first in first out: past
 * `max`, the oldest holder lets go of it (`release`). Used for the type cache's parsed objects
 * (storage/cacher/cached-entry.ts) and the read cache's GET body bytes and Pod JSON
 * (actors/read-cache.ts). Adding a holder already held keeps its place.
 *
 * O(1) per add and delete: an array queue of places, each holder's live place in a map (a place
 * whose holder was deleted, or added again later, is skipped when it reaches the head). A Set
 * used as the queue (its first value as the oldest) cost O(max) per eviction: V8's ordered hash
 * table keeps deleted entries as holes until it rehashes, and every `values().next()` walks the
 * holes at its head (1.3 µs per add at max 4,096, 2.4 µs at 8,192).
 */
export class FifoHolders<T> {
  /** each holder held, to its place: an index into `queue` plus `base` */
  private readonly held = new Map<T, number>();
  private queue: (T | undefined)[] = [];
  /** the first live-or-stale place still in `queue` */
  private head = 0;
  /** the place of queue[0] (places only grow, so a stale place never matches a later one) */
  private base = 0;

  constructor(
    public max: number,
    private readonly release: (oldest: T) => void,
  ) {}

  add(holder: T): void {
    if (this.held.has(holder)) return;
    this.held.set(holder, this.base + this.queue.length);
    this.queue.push(holder);
    while (this.held.size > this.max) {
      const oldest = this.queue[this.head] as T;
      const place = this.base + this.head;
      this.queue[this.head++] = undefined;
      if (this.held.get(oldest) !== place) continue; // deleted, or held at a later place
      this.held.delete(oldest);
      this.release(oldest);
    }
    this.compact();
  }

  /** A holder whose hold is gone anyway (replaced, deleted) leaves the order now. */
  delete(holder: T): void {
    this.held.delete(holder);
  }

  get size(): number {
    return this.held.size;
  }

  /**
   * Keeps the queue within a constant factor of the holders: drops the consumed head once it is
   * half the array, and the stale places (deletes) once they outnumber the holders.
   */
  private compact(): void {
    const length = this.queue.length - this.head;
    if (length > 2 * this.held.size + 64) {
      const live: T[] = [];
      for (let i = this.head; i < this.queue.length; i++) {
        const h = this.queue[i] as T;
        if (this.held.get(h) === this.base + i) live.push(h);
      }
      this.base += this.queue.length;
      live.forEach((h, i) => this.held.set(h, this.base + i));
      this.queue = live;
      this.head = 0;
    } else if (this.head > 64 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.base += this.head;
      this.head = 0;
    }
  }
}
