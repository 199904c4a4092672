/**
 * The one shape of everything on the front thread that follows the shards' objects (caches,
 * indexes, controllers, the watch hub): `load` takes the state of every object once (the shards'
 * load at start, or a later snapshot), `observe` takes each committed batch of change events
 * after it. A ChangeFeed is the ordered subscriber list the change events fan out to.
 */
import type { CachedObject, ChangeEvent } from './protocol.js';

export interface Informer {
  load(objects: readonly CachedObject[]): void;
  observe(events: readonly ChangeEvent[]): void;
}

interface Subscription {
  readonly name: string;
  readonly informer: Informer;
  active: boolean;
}

/**
 * Delivers to its subscribers one at a time in the order they subscribed. A dispatch goes to
 * the subscribers present when it began: one subscribed during a dispatch first hears the next
 * one, and one unsubscribed during a dispatch (and not reached yet) hears nothing more.
 */
export class ChangeFeed implements Informer {
  private subs: Subscription[] = [];

  /** Appends a subscriber (delivered after every earlier one); returns its unsubscribe. */
  subscribe(name: string, informer: Informer): () => void {
    const sub: Subscription = { name, informer, active: true };
    this.subs = [...this.subs, sub];
    return () => {
      sub.active = false;
      this.subs = this.subs.filter((s) => s !== sub);
    };
  }

  /** The subscribers' names in delivery order. */
  names(): string[] {
    return this.subs.map((s) => s.name);
  }

  load(objects: readonly CachedObject[]): void {
    for (const s of this.subs) if (s.active) s.informer.load(objects);
  }

  observe(events: readonly ChangeEvent[]): void {
    // `subs` is replaced (never mutated) on (un)subscribe, so this loop sees a fixed list
    for (const s of this.subs) if (s.active) s.informer.observe(events);
  }
}

/** An informer that only follows changes (its state needs no load). */
export function observer(observe: (events: readonly ChangeEvent[]) => void): Informer {
  return { load: () => undefined, observe };
}
