/**
 * Live watch fan-out on the front thread. Each committed change arrives once, already
 * encoded by its actor; the hub frames it once per event type and writes the same bytes to
 * every matching watcher, one write per watcher per dispatched batch. A slow watcher is cut
 * off at its buffer limit, never slowing others.
 *
 * Hand-over from the actor: a watch op answers with the state at the version its batch read
 * (`fromRV`). Changes committed by that same batch were dispatched just before the op's reply
 * resolved, so the hub keeps the latest dispatched changes per type (`recent`) and replays
 * those newer than `fromRV` when the watcher registers. Only the same batch can fall in that
 * gap (the shard sends its next batch on a later turn), so the buffer never drops what a
 * registering watcher needs; if it ever did, the watcher is told 410 instead of missing events.
 */
import type { ChangeEvent } from '../actors/protocol.js';
import { eventLine, filterEvent, objectFor, type Matcher } from '../api/watch-filter.js';

export interface WatchSink {
  /** writes bytes; returns the bytes currently buffered for this client (an estimate) */
  write(chunk: string): number;
  /** ends the stream cleanly */
  close(): void;
  /** drops the connection at once (slow consumer) */
  abort(): void;
}

export interface Watcher {
  typeKey: string;
  namespace: string;
  matcher: Matcher | undefined;
  /** last version delivered (events at or below it are not sent again) */
  fromRV: number;
  /** the version the watch started at: bookmarks are sent only past it */
  startRV: number;
  sink: WatchSink;
  bookmarks: boolean;
  kind: string;
  apiVersion: string;
  closed: boolean;
}

/** changes kept per type beyond the latest dispatched batch */
const RECENT = 1024;

interface Recent { events: ChangeEvent[]; droppedUpTo: number }

export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  private readonly recent = new Map<string, Recent>();
  /** watchers cut off for being slow (observability) */
  slowClosed = 0;

  /**
   * @param convert the JSON of an object as another apiVersion (multi-version types: a watcher
   *   of a non-storage version gets converted events, converted once per version and change)
   */
  constructor(private readonly bufferLimit: number, private readonly convert?: (typeKey: string, json: string, apiVersion: string) => string) {}

  get count(): number {
    let n = 0;
    for (const s of this.byType.values()) n += s.size;
    return n;
  }

  /** Registers a watcher; first replays dispatched changes newer than its start. */
  add(w: Watcher): void {
    const r = this.recent.get(w.typeKey);
    if (r) {
      if (w.fromRV < r.droppedUpTo) {
        // cannot happen by construction; never let a watcher silently miss events
        w.sink.write(expiredLine(w.fromRV, r.droppedUpTo));
        w.closed = true;
        w.sink.close();
        return;
      }
      let out = '';
      for (let i = firstAfter(r.events, w.fromRV); i < r.events.length; i++) out += this.lineFor(w, r.events[i]!, new Map());
      if (out) this.send(w, out);
      if (w.closed) return;
    }
    let set = this.byType.get(w.typeKey);
    if (!set) this.byType.set(w.typeKey, set = new Set());
    set.add(w);
  }

  remove(w: Watcher): void {
    w.closed = true;
    const set = this.byType.get(w.typeKey);
    if (set) {
      set.delete(w);
      if (set.size === 0) this.byType.delete(w.typeKey);
    }
  }

  /** Fans out one batch of committed changes (in rv order). */
  dispatch(events: ChangeEvent[]): void {
    const byType = new Map<string, ChangeEvent[]>();
    for (const ev of events) {
      let l = byType.get(ev.typeKey);
      if (!l) byType.set(ev.typeKey, l = []);
      l.push(ev);
    }
    for (const [typeKey, evs] of byType) {
      this.remember(typeKey, evs);
      const set = this.byType.get(typeKey);
      if (!set) continue;
      const lines = evs.map(() => new Map<string, string>());
      for (const w of set) {
        let out = '';
        for (let i = 0; i < evs.length; i++) out += this.lineFor(w, evs[i]!, lines[i]!);
        if (out) this.send(w, out);
      }
    }
  }

  private remember(typeKey: string, evs: ChangeEvent[]): void {
    let r = this.recent.get(typeKey);
    if (!r) this.recent.set(typeKey, r = { events: [], droppedUpTo: 0 });
    r.events.push(...evs);
    // keep the whole latest batch plus up to RECENT older changes
    const drop = r.events.length - Math.max(RECENT, evs.length);
    if (drop > 0) {
      r.droppedUpTo = r.events[drop - 1]!.rv;
      r.events.splice(0, drop);
    }
  }

  /** The framed line a watcher gets for a change ('' when it sees nothing); advances fromRV. */
  private lineFor(w: Watcher, ev: ChangeEvent, lines: Map<string, string>): string {
    if (w.closed || ev.rv <= w.fromRV) return '';
    if (w.namespace && ev.namespace !== w.namespace) return '';
    const prev = ev.prevFields ? { labels: ev.prevLabels, fields: ev.prevFields } : undefined;
    const type = filterEvent(w.matcher, ev.type, ev, prev);
    if (!type) return '';
    const same = ev.apiVersion === w.apiVersion || !this.convert;
    const key = same ? type : `${type} ${w.apiVersion}`;
    let line = lines.get(key);
    if (!line) {
      const json = objectFor(type, ev.type, ev.json, ev.prevJson, ev.rv);
      lines.set(key, line = eventLine(type, same ? json : this.convert!(ev.typeKey, json, w.apiVersion)));
    }
    w.fromRV = ev.rv;
    return line;
  }

  private send(w: Watcher, chunk: string): void {
    if (w.sink.write(chunk) > this.bufferLimit) {
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
      const lines = new Map<string, string>();
      for (const w of set) {
        if (!w.bookmarks || w.closed || rv <= w.startRV || rv < w.fromRV) continue;
        w.fromRV = rv;
        let line = lines.get(w.apiVersion);
        if (!line) lines.set(w.apiVersion, line = bookmarkLine(w.kind, w.apiVersion, rv));
        this.send(w, line);
      }
    }
  }
}

function firstAfter(evs: ChangeEvent[], rv: number): number {
  let lo = 0, hi = evs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (evs[mid]!.rv <= rv) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export function bookmarkLine(kind: string, apiVersion: string, rv: number, annotations?: Record<string, string>): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  return eventLine('BOOKMARK', JSON.stringify({ kind, apiVersion, metadata }));
}

export function expiredLine(rv: number, oldest: number): string {
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${rv} (${oldest})`, reason: 'Expired', code: 410 };
  return eventLine('ERROR', JSON.stringify(status));
}
