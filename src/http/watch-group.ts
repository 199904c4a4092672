/**
 * Watchers of one type that get the same bytes for every event: no label or field selector,
 * the same namespace (or all), stream encoding and apiVersion, and no Table view (whose first
 * event carries the column headers). The hub frames each event once per group and keeps the
 * group's pending frames in one list, so a dispatch costs per group, not per watcher, and a
 * flush joins the frames once and hands the same bytes to every member: what is left per
 * watcher is the write itself.
 *
 * Versions: a member's fromRV is the last version it was written. A flush writes each member
 * the pending frames above its fromRV (all of them but for a member flushed early by the hub,
 * before a bookmark or a close), then advances it to the last pending version, so no frame is
 * written twice or skipped, and frames keep their rv order.
 *
 * Slices: a flush may stop when its budget runs out (src/http/watch-flush.ts) and go on later
 * with the frames it took (`sending`); frames dispatched meanwhile are pending for the next
 * flush, and the members this one has yet to reach get them with its own frames (not one
 * flush later). Whatever writes a member, it gets the taken frames above its fromRV, then the
 * pending ones, and advances past them, so the order holds across slices too.
 */
import type { Encoding } from '../actors/protocol.js';
import { joinChunks, type Chunk } from '../codec/watch-encoding.js';
import type { Matcher } from '../api/watch-filter.js';
import { UNLIMITED, type Budget } from './watch-budget.js';

/** What the group needs of a watcher (the hub's Watcher). */
export interface Member {
  namespace: string;
  matcher: Matcher | undefined;
  fromRV: number;
  apiVersion: string;
  enc: Encoding;
  closed: boolean;
  failed?: boolean;
}

/** The key of the group a watcher belongs to, or undefined when its events are its own. */
export function groupKey(w: Member, streamKey: string): string | undefined {
  if (w.matcher || w.enc.view?.as === 'Table') return undefined;
  return `${w.namespace}\u0000${streamKey}\u0000${w.apiVersion}`;
}

/** Frames a flush took from a group and the members it has yet to write them to. */
interface Sending<W> {
  rvs: number[];
  chunks: Chunk[];
  next: Iterator<W>;
  /** the frames above a member's fromRV joined, per fromRV (most members share one), while `pendingSeen` frames are pending */
  joined: Map<number, Chunk>;
  pendingSeen: number;
}

export class WatchGroup<W extends Member> {
  readonly members = new Set<W>();
  /** versions and frames dispatched since the last flush began, in rv order */
  private rvs: number[] = [];
  private chunks: Chunk[] = [];
  /** a flush stopped by its budget, to be continued before the next one begins */
  private sending: Sending<W> | undefined;

  constructor(readonly namespace: string) {}

  /** A member to frame events for (every member gets the same frames). */
  get representative(): W | undefined {
    for (const w of this.members) return w;
    return undefined;
  }

  get pending(): boolean {
    return this.chunks.length > 0;
  }

  push(rv: number, chunk: Chunk): void {
    this.rvs.push(rv);
    this.chunks.push(chunk);
  }

  /**
   * Hands every member its frames (one shared buffer per fromRV, in practice one for all) via
   * send. Returns false when the budget ran out first: a later call goes on with the same
   * frames and members (a member that joins meanwhile is visited too; it has those versions
   * from the hub's replay).
   */
  flush(send: (w: W, chunk: Chunk) => void, budget: Budget = UNLIMITED): boolean {
    let s = this.sending;
    if (!s) {
      if (!this.chunks.length) return true;
      s = this.sending = {
        rvs: this.rvs,
        chunks: this.chunks,
        next: this.members.values(),
        joined: new Map(),
        pendingSeen: 0,
      };
      this.rvs = [];
      this.chunks = [];
    }
    const last = s.rvs[s.rvs.length - 1]!;
    for (;;) {
      if (!budget.more()) return false;
      const r = s.next.next();
      if (r.done) break;
      const w = r.value;
      // frames dispatched since this flush began go out with it to the members it has yet to reach
      const top = this.chunks.length ? this.rvs[this.rvs.length - 1]! : last;
      if (w.closed || w.failed || w.fromRV >= top) continue;
      if (s.pendingSeen !== this.chunks.length) {
        s.joined.clear();
        s.pendingSeen = this.chunks.length;
      }
      let out = s.joined.get(w.fromRV);
      if (!out) s.joined.set(w.fromRV, (out = joinChunks(this.above(w.fromRV))));
      w.fromRV = top;
      send(w, out);
    }
    this.sending = undefined;
    return true;
  }

  /** The taken and pending frames above one member's fromRV, written to it now (it advances past them). */
  flushMember(w: W, send: (w: W, chunk: Chunk) => void): void {
    if (w.closed || w.failed) return;
    const out = this.above(w.fromRV);
    if (!out.length) return;
    w.fromRV = this.rvs.length ? this.rvs[this.rvs.length - 1]! : this.sending!.rvs[this.sending!.rvs.length - 1]!;
    send(w, joinChunks(out));
  }

  /** The taken, then the pending frames above a version (both in rv order, the taken ones older). */
  private above(from: number): Chunk[] {
    const out: Chunk[] = [];
    for (const [rvs, chunks] of [
      [this.sending?.rvs ?? [], this.sending?.chunks ?? []],
      [this.rvs, this.chunks],
    ] as const) {
      for (let i = 0; i < rvs.length; i++) if (rvs[i]! > from) out.push(chunks[i]!);
    }
    return out;
  }
}

/** A watcher as the hub registers it: its type, its stream key and, once joined, its group. */
type Registered<W extends Member> = Member & { typeKey: string; key?: string; group?: WatchGroup<W> };

/** Per type key, the groups by group key and the watchers whose events are their own (solo). */
export class Membership<W extends Registered<W>> {
  private readonly byGroup = new Map<string, Map<string, WatchGroup<W>>>();
  private readonly bySolo = new Map<string, Set<W>>();

  groups(typeKey: string): Iterable<WatchGroup<W>> {
    return this.byGroup.get(typeKey)?.values() ?? [];
  }

  solo(typeKey: string): Iterable<W> {
    return this.bySolo.get(typeKey) ?? [];
  }

  /** Puts a registered watcher in its group, or among the solo watchers of its type. */
  join(w: W): void {
    const gk = groupKey(w, w.key!);
    if (gk === undefined) {
      let solo = this.bySolo.get(w.typeKey);
      if (!solo) this.bySolo.set(w.typeKey, (solo = new Set()));
      solo.add(w);
      return;
    }
    let gs = this.byGroup.get(w.typeKey);
    if (!gs) this.byGroup.set(w.typeKey, (gs = new Map()));
    let g = gs.get(gk);
    if (!g) gs.set(gk, (g = new WatchGroup<W>(w.namespace)));
    g.members.add(w);
    w.group = g;
  }

  /** Takes a watcher out of its group or the solo set (empty groups and sets are dropped). */
  leave(w: W): void {
    const g = w.group;
    if (!g) {
      const solo = this.bySolo.get(w.typeKey);
      if (solo?.delete(w) && solo.size === 0) this.bySolo.delete(w.typeKey);
      return;
    }
    g.members.delete(w);
    if (g.members.size > 0) return;
    const gs = this.byGroup.get(w.typeKey);
    const gk = groupKey(w, w.key!)!;
    if (gs?.get(gk) === g) gs.delete(gk);
    if (gs?.size === 0) this.byGroup.delete(w.typeKey);
  }

  deleteType(typeKey: string): void {
    this.byGroup.delete(typeKey);
    this.bySolo.delete(typeKey);
  }
}
