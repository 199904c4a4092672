/**
 * Live watch fan-out on the front thread. Each committed change arrives once, already
 * encoded by its actor; the hub frames it once per event type (as bytes) and writes the same
 * bytes to every matching watcher. The frames a watcher gets from all batches dispatched
 * before a flush go out together, one corked write per watcher however many batches arrived
 * (several shards, pipelined replies), in rv order. Watchers without selectors share their
 * frames in groups (src/http/watch-group.ts: a dispatch and a join per group, not per
 * watcher); the others queue their own, and those queued the same frames share one joined
 * buffer. The flush runs at the end of the turn (setImmediate), or, right after a
 * costly flush, once as long again has passed (at most MAX_PACE_MS): the cost of a flush is one
 * send per watcher, so under a steady stream of writes pacing puts several events in each send
 * instead of spending the thread on one send per watcher per event. A flush writes in slices
 * of about SLICE_MS (src/http/watch-flush.ts) with I/O between them, so writes, actor replies
 * and responses wait one slice, not a whole fan-out. Any other write to a watcher (bookmark,
 * close) first writes its frames. A slow watcher is cut off at its buffer limit, never slowing
 * others.
 *
 * Hand-over from the actor: a watch op answers with the state at the version its batch read
 * (`fromRV`). Changes committed by that same batch were dispatched just before the op's reply
 * resolved, so the hub keeps the latest dispatched changes per type (`recent`) and replays
 * those newer than `fromRV` when the watcher registers. Only the same batch can fall in that
 * gap (the shard sends its next batch on a later turn), so the buffer never drops what a
 * registering watcher needs; if it ever did, the watcher is told 410 instead of missing events.
 */
import type { ChangeEvent, Encoding } from '../actors/protocol.js';
import { filterEvent, objectFor } from '../api/watch-filter.js';
import { encodeEventObject, frameEventBytes, joinChunks, streamKey, type Chunk } from '../codec/watch-encoding.js';
import { SLICE_MS, SliceBudget, UNLIMITED, type Budget } from './watch-budget.js';
import { FlushRun } from './watch-flush.js';
import { InitialEvents } from './initial-events.js';
import { Membership, type WatchGroup } from './watch-group.js';
import { bookmarkEvent, encodeError, errorEvent, expiredStatus } from './watch-events.js';
import { RecentChanges } from './watch-recent.js';
import type { Convert, Watcher } from './watch-watcher.js';
import { watchTrace } from './watch-trace.js';

export { bookmarkEvent, errorEvent } from './watch-events.js';
export type { Convert, Watcher, WatchSink } from './watch-watcher.js';

/** A watcher as the hub keeps it: with its stream key, computed once, and its group if it has one. */
type Live = Watcher & { key?: string; failed?: boolean; group?: WatchGroup<Live> };

/** the longest a flush waits after the previous one (bounds the delivery delay pacing adds) */
const MAX_PACE_MS = 10;

export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  /** the watchers sharing their frames in groups, and the others (src/http/watch-group.ts) */
  private readonly members = new Membership<Live>();
  /** groups with frames dispatched and not yet flushed */
  private dirty = new Set<WatchGroup<Live>>();
  private readonly recent = new RecentChanges();
  /** per type key, the stream encodings other than plain JSON in use, with their watcher counts */
  private readonly encodings = new Map<string, Map<string, { enc: Encoding; n: number }>>();
  private streamsSnapshot: Record<string, Encoding[]> | undefined;
  private streamsDirty = false;
  /** watchers cut off for being slow (observability) */
  slowClosed = 0;
  /** initial events shared among the watches that start from the same state */
  readonly initial = new InitialEvents();
  /** per watcher, the frames dispatched since the last flush began (see flush) */
  private queued = new Map<Live, Chunk[]>();
  /** a flush under way (written in slices), finished before the next one begins */
  private run: FlushRun<Live> | undefined;
  private flushScheduled = false;
  /** when the last flush ended and how long it took (performance.now() ms): the pacing of the next */
  private lastFlushEnd = 0;
  private lastFlushCost = 0;
  /** stage timestamps for the bench (PLAT_WATCH_TRACE), else undefined */
  private readonly trace = watchTrace();

  /** convert: for watchers of another version than the one a change was stored in */
  constructor(
    private readonly bufferLimit: number,
    private readonly convert: Convert = restamp,
  ) {}

  get count(): number {
    let n = 0;
    for (const s of this.byType.values()) n += s.size;
    return n;
  }

  /** Watchers of one type (all namespaces): the mutating work estimate of API Priority and Fairness. */
  watchers(typeKey: string): number {
    return this.byType.get(typeKey)?.size ?? 0;
  }

  /** Registers a watcher; first replays dispatched changes newer than its start. */
  add(w: Live): void {
    w.key = streamKey(w.enc);
    const r = this.recent.after(w.typeKey, w.fromRV);
    if (r.expired !== undefined) {
      // cannot happen by construction; never let a watcher silently miss events
      w.sink.write(errorEvent(w.enc, expiredStatus(w.fromRV, r.expired)));
      w.closed = true;
      w.sink.close();
      return;
    }
    const out: Chunk[] = [];
    const lines = new Map<string, Chunk>();
    for (const ev of r.events) this.collect(out, w, ev, lines);
    if (out.length) this.send(w, joinChunks(out));
    if (w.closed || w.failed) return;
    let set = this.byType.get(w.typeKey);
    if (!set) this.byType.set(w.typeKey, (set = new Set()));
    set.add(w);
    this.members.join(w);
    this.countEncoding(w, 1);
  }

  /** Ends every watch of a type that stops being served (a deleted CRD), as upstream does. */
  closeType(typeKey: string): void {
    for (const w of [...(this.byType.get(typeKey) ?? [])]) {
      this.flushOne(w);
      this.remove(w);
      w.sink.close();
    }
    this.recent.delete(typeKey);
    this.members.deleteType(typeKey);
  }

  remove(w: Live): void {
    w.closed = true;
    const set = this.byType.get(w.typeKey);
    if (set?.delete(w)) {
      this.members.leave(w);
      this.countEncoding(w, -1);
      if (set.size === 0) this.byType.delete(w.typeKey);
    }
  }

  /**
   * The encodings other than plain JSON live watchers use, per type key: sent to the actors
   * with each batch so events arrive encoded once for all watchers sharing an encoding.
   */
  streams(): Record<string, Encoding[]> | undefined {
    if (!this.streamsDirty) return this.streamsSnapshot;
    this.streamsDirty = false;
    let out: Record<string, Encoding[]> | undefined;
    for (const [typeKey, m] of this.encodings) (out ??= {})[typeKey] = [...m.values()].map((e) => e.enc);
    return (this.streamsSnapshot = out);
  }

  private countEncoding(w: Live, d: 1 | -1): void {
    if (w.key === 'json') return;
    let m = this.encodings.get(w.typeKey);
    if (!m) this.encodings.set(w.typeKey, (m = new Map()));
    const e = m.get(w.key!) ?? { enc: w.enc, n: 0 };
    e.n += d;
    if (e.n > 0) m.set(w.key!, e);
    else m.delete(w.key!);
    if (m.size === 0) this.encodings.delete(w.typeKey);
    this.streamsDirty = true;
  }

  /** Fans out one batch of committed changes (in rv order). */
  dispatch(events: readonly ChangeEvent[]): void {
    this.trace?.received(events);
    const typeKey = events[0]?.typeKey;
    if (typeKey === undefined) return;
    let oneType = true;
    for (const ev of events) if (ev.typeKey !== typeKey) oneType = false;
    // most batches hold changes of one type: no per-batch grouping (garbage on the front thread)
    if (oneType) return this.dispatchType(typeKey, events);
    const byType = new Map<string, ChangeEvent[]>();
    for (const ev of events) {
      let l = byType.get(ev.typeKey);
      if (!l) byType.set(ev.typeKey, (l = []));
      l.push(ev);
    }
    for (const [key, evs] of byType) this.dispatchType(key, evs);
  }

  /** Fans out a batch's changes of one type (in rv order). */
  private dispatchType(typeKey: string, evs: readonly ChangeEvent[]): void {
    this.recent.remember(typeKey, evs);
    if (!this.byType.has(typeKey)) return;
    const lines = new Map<string, Chunk>();
    for (const g of this.members.groups(typeKey)) this.collectGroup(g, evs, lines);
    for (const w of this.members.solo(typeKey)) {
      const out: Chunk[] = [];
      for (const ev of evs) this.collect(out, w, ev, lines);
      if (out.length) this.enqueue(w, out);
    }
  }

  /** Frames a batch once for a whole group (framed as for any of its members, all get the same). */
  private collectGroup(g: WatchGroup<Live>, evs: readonly ChangeEvent[], lines: Map<string, Chunk>): void {
    const w = g.representative;
    if (!w) return;
    for (let i = 0; i < evs.length; i++) {
      const ev = evs[i]!;
      if (g.namespace && ev.namespace !== g.namespace) continue;
      let line: Chunk;
      try {
        line = this.lineFor(w, ev, ev.type, lines);
      } catch (e) {
        // each member gets what it was due before the failure, then the ERROR event, and is closed
        const err = encodeError(w.enc, e);
        for (const m of [...g.members]) {
          g.flushMember(m, (x, c) => this.send(x, c));
          m.failed = true;
          this.send(m, err);
        }
        return;
      }
      g.push(ev.rv, line);
    }
    if (!g.pending) return;
    this.dirty.add(g);
    this.schedule();
  }

  private enqueue(w: Live, out: Chunk[]): void {
    const q = this.queued.get(w);
    if (q) for (const c of out) q.push(c);
    else this.queued.set(w, out);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // pacing: the next flush waits as long as the last one took (capped), so fan-out takes at
    // most about half the thread and a burst's events share each watcher's write (syscall)
    const wait = Math.min(MAX_PACE_MS, this.lastFlushEnd + this.lastFlushCost - performance.now());
    if (wait >= 1) setTimeout(this.slice, wait);
    else setImmediate(this.slice);
  }

  /** A scheduled flush: one slice, the rest after the I/O that arrived meanwhile. */
  private readonly slice = (): void => this.flush(new SliceBudget(performance.now() + SLICE_MS));

  /**
   * Writes every watcher's queued frames: one write per watcher for the whole flush. With a
   * budget, stops when it runs out and goes on at the next turn (setImmediate: after I/O);
   * without, writes everything now (tests). A flush under way is finished before frames
   * dispatched since it began are taken.
   */
  flush(budget: Budget = UNLIMITED): void {
    this.flushScheduled = false;
    let run = this.run;
    if (!run) {
      // nothing queued (written early by flushOne): the last flush still paces the next
      if (this.queued.size === 0 && this.dirty.size === 0) return;
      run = this.run = new FlushRun(this.dirty, this.queued, this.takeQueued);
      this.trace?.flushBegins();
      this.dirty = new Set();
      this.queued = new Map();
    }
    const started = performance.now();
    const done = run.step(this.sendTo, budget);
    const now = performance.now();
    run.busyMs += now - started;
    run.slices++;
    if (!done) {
      this.flushScheduled = true;
      setImmediate(this.slice);
      return;
    }
    this.run = undefined;
    this.trace?.flushEnds(run.busyMs, run.slices);
    this.lastFlushEnd = now;
    this.lastFlushCost = run.busyMs;
    if (this.queued.size > 0 || this.dirty.size > 0) this.schedule();
  }

  private readonly sendTo = (w: Live, chunk: Chunk): void => this.send(w, chunk);

  /** A solo watcher's frames queued for the next flush, taken out (written with the flush under way). */
  private readonly takeQueued = (w: Live): Chunk[] | undefined => {
    const chunks = this.queued.get(w);
    if (chunks) this.queued.delete(w);
    return chunks;
  };

  /** Writes one watcher's frames now, those of a flush under way first (before anything else is written to it). */
  private flushOne(w: Live): void {
    if (w.group) return w.group.flushMember(w, this.sendTo);
    const early = this.run?.take(w);
    const chunks = this.takeQueued(w);
    const all = early && chunks ? [...early, ...chunks] : (early ?? chunks);
    if (all && !w.closed) this.send(w, all.length === 1 ? all[0]! : joinChunks(all));
  }

  /**
   * Appends the framed event a watcher gets for a change (nothing when it sees none) and
   * advances fromRV. Frames are shared per (change, event type, stream encoding, headers) in `lines`.
   */
  private collect(out: Chunk[], w: Live, ev: ChangeEvent, lines: Map<string, Chunk>): void {
    if (w.closed || w.failed || ev.rv <= w.fromRV) return;
    if (w.namespace && ev.namespace !== w.namespace) return;
    const prev = ev.prevFields ? { labels: ev.prevLabels, fields: ev.prevFields } : undefined;
    const type = filterEvent(w.matcher, ev.type, ev, prev);
    if (!type) return;
    let line: Chunk;
    try {
      line = this.lineFor(w, ev, type, lines);
    } catch (e) {
      out.push(encodeError(w.enc, e));
      w.failed = true;
      return;
    }
    w.fromRV = ev.rv;
    w.headersSent = true;
    out.push(line);
  }

  /** The framed event of `type` for a watcher, shared per (change, event type, stream encoding, headers, version) in `lines`; throws when it cannot be encoded. */
  private lineFor(w: Live, ev: ChangeEvent, type: ChangeEvent['type'], lines: Map<string, Chunk>): Chunk {
    const headers = w.enc.view?.as === 'Table' && !w.headersSent;
    // another served version of the type (events.<domain>/v1 over core Events) gets a converted object
    const other = w.apiVersion !== ev.apiVersion;
    const id = `${ev.rv}|${type}|${w.key}|${headers ? 'h' : ''}${other ? `|${w.apiVersion}` : ''}`;
    let line = lines.get(id);
    if (!line) {
      // bytes once for every watcher: uWS would re-encode a string on each write
      line = frameEventBytes(w.enc, type, this.objectOf(w, ev, type, headers, other));
      lines.set(id, line);
    }
    return line;
  }

  /** The event's object in the watcher's encoding: the actor's bytes when it sent them, else encoded here. */
  private objectOf(w: Live, ev: ChangeEvent, type: string, headers: boolean, other: boolean): Chunk {
    let json = objectFor(type as ChangeEvent['type'], ev.type, ev.json, ev.prevJson, ev.rv);
    if (other) json = this.convert(ev.typeKey, w.apiVersion, json);
    if (w.key === 'json') return json;
    const ready = !other && json === ev.json && !headers ? ev.encoded?.[w.key!] : undefined;
    return ready ?? encodeEventObject(w.enc, { kind: w.kind, json }, Date.now(), headers);
  }

  private send(w: Live, chunk: Chunk): void {
    if (w.failed) {
      // an encoding failure: the ERROR event is the last thing this watcher gets
      this.remove(w);
      w.sink.write(chunk);
      w.sink.close();
      return;
    }
    const buffered = w.sink.write(chunk);
    this.trace?.sent(buffered);
    if (buffered > this.bufferLimit) {
      this.slowClosed++;
      this.remove(w);
      w.sink.abort();
    }
  }

  /**
   * Sends a BOOKMARK at the type's safe version to every watcher that asked for bookmarks,
   * once that version is past the watch's start and not behind what it was already sent.
   */
  bookmark(safeRV: (typeKey: string) => number): void {
    for (const [typeKey, set] of this.byType) {
      const rv = safeRV(typeKey);
      const lines = new Map<string, Chunk>();
      for (const w of set as Set<Live>) {
        if (!w.bookmarks || w.closed || rv <= w.startRV) continue;
        // a group member's fromRV advances when its frames are written: write them first
        this.flushOne(w);
        if (w.closed || rv < w.fromRV) continue;
        w.fromRV = rv;
        const id = `${w.apiVersion}|${w.key}`;
        let line = lines.get(id);
        if (!line) lines.set(id, (line = bookmarkEvent(w.enc, w.kind, w.apiVersion, rv)));
        this.send(w, line);
      }
    }
  }
}

/** The default conversion: the same fields under the watcher's apiVersion. */
function restamp(_typeKey: string, apiVersion: string, json: string): string {
  return JSON.stringify({ ...JSON.parse(json), apiVersion });
}
