/**
 * Stage timestamps of watch events, for the bench only: with PLAT_WATCH_TRACE set to a file
 * path, the hub (src/http/watch-hub.ts) records per event the writer's send time (the object's
 * `bench-ts` annotation), the actor's publish after its commit, the front's receipt (dispatch),
 * and the flush that wrote it: when it began, its first and its last send. Lines are appended
 * to the file about once a second (one JSON array per event, fields as in TRACE_FIELDS), so
 * bench/scenarios/watch-drive.ts can set them beside what the clients saw; the front thread's
 * garbage collections go to a file beside it (`gcFile`), to count them per phase. Unset, the
 * hub has no trace and pays one undefined check per dispatch, flush and send.
 *
 * An event received while a flush is under way is counted in the next flush (its last write is
 * there: the members already written get it then), but its first write is the first send after
 * its receipt (the members the flush under way has yet to reach get it with their frames); with
 * watchers of other types or namespaces that send may not carry it (the bench has one of each).
 */
import { appendFile } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import type { ChangeEvent } from '../actors/protocol.js';
import { TRACE_EVENTS } from '../actors/stream-events.js';
import { monoUs } from '../metrics/process-metrics.js';

/** The columns of a trace line (all monotonic µs but rv, sends and backlogged; 0 = unknown). */
export const TRACE_FIELDS = [
  'rv',
  'sentUs',
  'publishedUs',
  'receivedUs',
  'flushUs',
  'firstUs',
  'lastUs',
  /** sends of the flush, and those a backlogged socket queued (held until it drains) */
  'sends',
  'backlogged',
  /** the flush's time in its slices (µs; the rest of its wall is the event loop between them) and their count */
  'busyUs',
  'slices',
] as const;

const MARKER = '"bench-ts":"';

interface Rec {
  rv: number;
  sentUs: number;
  publishedUs: number;
  receivedUs: number;
  /** the first send after its receipt during an earlier flush (0: none) */
  firstUs: number;
}

/** The flush under way: the events it took, when it began, its first send. */
interface Run {
  recs: Rec[];
  flushUs: number;
  firstUs: number;
  sends: number;
  backlogged: number;
}

export class WatchTrace {
  private pending: Rec[] = [];
  /** pending[firstFrom..] have seen no send yet */
  private firstFrom = 0;
  private run: Run | undefined;
  private lines: string[] = [];

  /** the front thread's garbage collections: [start µs (monotonic), kind, duration µs] */
  private gcs: string[] = [];
  private readonly gcObserver: PerformanceObserver;

  constructor(private readonly file: string) {
    setInterval(() => this.write(), 1000).unref();
    // performance entries count from the time origin: monotonic µs = offset + startTime
    const offsetUs = monoUs() - performance.now() * 1000;
    this.gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
        this.gcs.push(JSON.stringify([Math.round(offsetUs + e.startTime * 1000), kind, Math.round(e.duration * 1000)]));
      }
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  /** A batch reached the front (before it is framed). */
  received(events: readonly ChangeEvent[]): void {
    const now = monoUs();
    for (const ev of events) {
      const at = ev.json.indexOf(MARKER);
      const sentUs = at < 0 ? 0 : parseInt(ev.json.slice(at + MARKER.length, at + MARKER.length + 20), 10) || 0;
      this.pending.push({ rv: ev.rv, sentUs, publishedUs: ev.publishedUs ?? 0, receivedUs: now, firstUs: 0 });
    }
  }

  /** A flush begins: it takes every event received so far. */
  flushBegins(): void {
    this.run = { recs: this.pending, flushUs: monoUs(), firstUs: 0, sends: 0, backlogged: 0 };
    this.pending = [];
    this.firstFrom = 0;
  }

  /** One send of the flush under way (or of an early write between flushes, not counted). */
  sent(buffered: number): void {
    const r = this.run;
    if (!r) return;
    if (r.firstUs === 0) r.firstUs = monoUs();
    if (this.firstFrom < this.pending.length) {
      const now = monoUs();
      for (let i = this.firstFrom; i < this.pending.length; i++) this.pending[i]!.firstUs = now;
      this.firstFrom = this.pending.length;
    }
    r.sends++;
    if (buffered > 0) r.backlogged++;
  }

  /** The flush under way wrote its last watcher, in `slices` slices of `busyMs` in all. */
  flushEnds(busyMs = 0, slices = 0): void {
    const r = this.run;
    if (!r) return;
    this.run = undefined;
    const last = monoUs();
    for (const e of r.recs)
      this.lines.push(
        JSON.stringify([
          e.rv,
          e.sentUs,
          e.publishedUs,
          e.receivedUs,
          r.flushUs,
          e.firstUs || r.firstUs || last,
          last,
          r.sends,
          r.backlogged,
          Math.round(busyMs * 1000),
          slices,
        ]),
      );
  }

  private write(): void {
    if (this.gcs.length) {
      appendFile(gcFile(this.file), `${this.gcs.join('\n')}\n`, () => {});
      this.gcs = [];
    }
    if (!this.lines.length) return;
    const out = `${this.lines.join('\n')}\n`;
    this.lines = [];
    appendFile(this.file, out, () => {});
  }
}

/** Where the front thread's GC events go beside a trace file (one JSON array per collection). */
export const gcFile = (traceFile: string): string => `${traceFile}.gc`;

/** The hub's trace when the bench asked for one (PLAT_WATCH_TRACE), else undefined. */
export function watchTrace(): WatchTrace | undefined {
  return TRACE_EVENTS ? new WatchTrace(process.env.PLAT_WATCH_TRACE!) : undefined;
}
