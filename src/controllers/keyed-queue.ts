/**
 * One worker per key, newest item wins: while an item of a key is being handled, later items
 * of that key replace each other and the last one is handled next (so a controller never acts
 * twice at once on one object, and never on a stale copy once a newer one arrived).
 */
export class KeyedQueue<T> {
  private readonly latest = new Map<string, T>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly handle: (item: T) => Promise<void>,
    private readonly onError: (key: string, e: unknown) => void,
  ) {}

  add(key: string, item: T): void {
    this.latest.set(key, item);
    if (this.busy.has(key)) return;
    this.busy.add(key);
    void this.drain(key).finally(() => this.busy.delete(key));
  }

  private async drain(key: string): Promise<void> {
    // bounded by the events that arrive meanwhile: each turn consumes the newest item
    while (this.latest.has(key)) {
      const item = this.latest.get(key)!;
      this.latest.delete(key);
      try {
        await this.handle(item);
      } catch (e) {
        this.onError(key, e);
      }
    }
  }
}
