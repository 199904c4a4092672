/**
 * The latest changes the hub dispatched per type, replayed to a watcher that registers right
 * after its watch op's reply (src/http/watch-hub.ts explains the hand-over): the whole latest
 * batch plus up to RECENT older changes.
 */
import type { ChangeEvent } from '../actors/protocol.js';

/** changes kept per type beyond the latest dispatched batch */
const RECENT = 1024;

interface Recent {
  events: ChangeEvent[];
  droppedUpTo: number;
}

export class RecentChanges {
  private readonly byType = new Map<string, Recent>();

  remember(typeKey: string, evs: readonly ChangeEvent[]): void {
    let r = this.byType.get(typeKey);
    if (!r) this.byType.set(typeKey, (r = { events: [], droppedUpTo: 0 }));
    for (const ev of evs) r.events.push(ev);
    const drop = r.events.length - Math.max(RECENT, evs.length);
    if (drop > 0) {
      r.droppedUpTo = r.events[drop - 1]!.rv;
      r.events.splice(0, drop);
    }
  }

  /**
   * The kept changes of a type newer than rv, in order; `expired` (the newest version no longer
   * kept) when some newer than rv may have been dropped.
   */
  after(typeKey: string, rv: number): { events: readonly ChangeEvent[]; expired?: number } {
    const r = this.byType.get(typeKey);
    if (!r) return { events: [] };
    if (rv < r.droppedUpTo) return { events: [], expired: r.droppedUpTo };
    return { events: r.events.slice(firstAfter(r.events, rv)) };
  }

  delete(typeKey: string): void {
    this.byType.delete(typeKey);
  }
}

function firstAfter(evs: ChangeEvent[], rv: number): number {
  let lo = 0,
    hi = evs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (evs[mid]!.rv <= rv) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
