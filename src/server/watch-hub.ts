/**
 * Live watch fan-out on the front thread. Each committed change arrives once, already
 * encoded by its actor; the hub frames it once per event type and writes the same bytes to
 * every matching watcher. A slow watcher is cut off at its buffer limit, never slowing others.
 */
import type { ChangeEvent } from '../actors/protocol.js';
import { eventLine, filterEvent, type Matcher } from '../api/watch-filter.js';

export interface WatchSink {
  /** writes bytes; returns the bytes currently buffered for this client */
  write(chunk: string): number;
  close(): void;
}

export interface Watcher {
  typeKey: string;
  namespace: string;
  matcher: Matcher | undefined;
  fromRV: number;
  sink: WatchSink;
  bookmarks: boolean;
  kind: string;
  apiVersion: string;
  closed: boolean;
}

const RECENT = 4096;

export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  /** recent events per type, so a watcher registering just after a dispatch misses nothing */
  private readonly recent = new Map<string, ChangeEvent[]>();

  constructor(private readonly bufferLimit: number) {}

  get count(): number {
    let n = 0;
    for (const s of this.byType.values()) n += s.size;
    return n;
  }

  add(w: Watcher): void {
    for (const ev of this.recent.get(w.typeKey) ?? []) {
      if (ev.rv > w.fromRV) this.deliver(w, ev, new Map());
    }
    let set = this.byType.get(w.typeKey);
    if (!set) this.byType.set(w.typeKey, set = new Set());
    set.add(w);
  }

  remove(w: Watcher): void {
    w.closed = true;
    this.byType.get(w.typeKey)?.delete(w);
  }

  dispatch(events: ChangeEvent[]): void {
    for (const ev of events) {
      let r = this.recent.get(ev.typeKey);
      if (!r) this.recent.set(ev.typeKey, r = []);
      r.push(ev);
      if (r.length > RECENT) r.splice(0, r.length - RECENT);
      const set = this.byType.get(ev.typeKey);
      if (!set || set.size === 0) continue;
      const lines = new Map<string, string>();
      for (const w of set) this.deliver(w, ev, lines);
    }
  }

  private deliver(w: Watcher, ev: ChangeEvent, lines: Map<string, string>): void {
    if (w.closed || ev.rv <= w.fromRV) return;
    if (w.namespace && ev.namespace !== w.namespace) return;
    const prev = ev.prevFields ? { labels: ev.prevLabels, fields: ev.prevFields } : undefined;
    const type = filterEvent(w.matcher, ev.type, ev, prev);
    if (!type) return;
    let line = lines.get(type);
    if (!line) lines.set(type, line = eventLine(type, ev.json));
    w.fromRV = ev.rv;
    if (w.sink.write(line) > this.bufferLimit) {
      this.remove(w);
      w.sink.close();
    }
  }

  /** Sends a BOOKMARK at rv to every watcher that asked for bookmarks. */
  bookmark(safeRV: (typeKey: string) => number): void {
    for (const [typeKey, set] of this.byType) {
      const rv = safeRV(typeKey);
      for (const w of set) {
        if (!w.bookmarks || rv <= w.fromRV) continue;
        w.fromRV = rv;
        w.sink.write(bookmarkLine(w.kind, w.apiVersion, rv));
      }
    }
  }
}

export function bookmarkLine(kind: string, apiVersion: string, rv: number, annotations?: Record<string, string>): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  return eventLine('BOOKMARK', JSON.stringify({ kind, apiVersion, metadata }));
}
