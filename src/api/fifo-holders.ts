/**
 * Holders of something costly kept for the `max` most recent only, first in first out: past
 * `max`, the oldest holder lets go of it (`release`). Used for the type cache's parsed objects
 * (storage/cacher/cached-entry.ts) and the read cache's GET body bytes (actors/read-cache.ts).
 * Adding a holder already held keeps its place.
 */
export class FifoHolders<T> {
  private readonly order = new Set<T>();

  constructor(
    public max: number,
    private readonly release: (oldest: T) => void,
  ) {}

  add(holder: T): void {
    this.order.add(holder);
    while (this.order.size > this.max) {
      const oldest = this.order.values().next().value as T;
      this.order.delete(oldest);
      this.release(oldest);
    }
  }

  /** A holder whose hold is gone anyway (replaced, deleted) leaves the order now. */
  delete(holder: T): void {
    this.order.delete(holder);
  }

  get size(): number {
    return this.order.size;
  }
}
