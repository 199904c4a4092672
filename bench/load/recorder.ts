/**
 * What a scenario measured: per verb+resource operation stats (count, latency histogram,
 * errors by status code, bytes), a one-second timeline of the measured operations, and the
 * raw counts by verb/group/resource/code of every request sent (set-up included), which is
 * what the server's `apiserver_request_total` counters must show.
 */
import { Hdr } from './hdr.js';

export interface OpId {
  /** the verb as upstream's request metrics name it: GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE */
  verb: string;
  resource: string;
  /** API group, '' for the core group */
  group?: string;
  /** 'setup' traffic is counted but not judged; a scenario may name its own phases */
  phase?: string;
}

export class OpStats {
  requests = 0;
  readonly errorsByCode: Record<string, number> = {};
  bytes = 0;
  readonly hdr = new Hdr();
  /** performance.now() when the first request started and the last one ended */
  firstStart = Infinity;
  lastEnd = 0;
  constructor(
    readonly verb: string,
    readonly group: string,
    readonly resource: string,
    readonly phase: string,
  ) {}
  get key(): string {
    return opKey(this);
  }
}

export function opKey(o: { verb: string; group?: string; resource: string; phase?: string }): string {
  const res = o.group ? `${o.resource}.${o.group}` : o.resource;
  return `${o.phase && o.phase !== 'measure' ? o.phase + ' ' : ''}${o.verb} ${res}`;
}

export interface TimelinePoint {
  tSec: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class Recorder {
  readonly ops = new Map<string, OpStats>();
  /** verb|group|resource|code → requests the server answered (code 0: no answer) */
  readonly counts = new Map<string, number>();
  readonly timeline: TimelinePoint[] = [];
  private readonly window = new Hdr();
  private windowErrors = 0;
  readonly startMs = performance.now();

  private stats(op: OpId): OpStats {
    const phase = op.phase ?? 'measure';
    const k = opKey({ ...op, phase });
    let s = this.ops.get(k);
    if (!s) this.ops.set(k, (s = new OpStats(op.verb, op.group ?? '', op.resource, phase)));
    return s;
  }

  /** status 0 means the request got no answer (connection error, time-out, abort). */
  record(op: OpId, status: number, ms: number, bytes: number): void {
    const s = this.stats(op);
    s.requests++;
    s.bytes += bytes;
    const end = performance.now();
    if (end - ms < s.firstStart) s.firstStart = end - ms;
    if (end > s.lastEnd) s.lastEnd = end;
    s.hdr.recordMs(ms);
    const ok = status >= 200 && status < 300;
    if (!ok) s.errorsByCode[String(status)] = (s.errorsByCode[String(status)] ?? 0) + 1;
    const ck = `${op.verb}|${op.group ?? ''}|${op.resource}|${status}`;
    this.counts.set(ck, (this.counts.get(ck) ?? 0) + 1);
    if ((op.phase ?? 'measure') !== 'setup' && op.verb !== 'WATCH') {
      this.window.recordMs(ms);
      if (!ok) this.windowErrors++;
    }
  }

  /** Requests of the measured phases so far, and their errors. */
  measured(): { requests: number; errors: number; p99Ms: number } {
    const all = new Hdr();
    let errors = 0;
    for (const s of this.ops.values()) {
      if (s.phase === 'setup' || s.verb === 'WATCH') continue;
      all.merge(s.hdr);
      for (const n of Object.values(s.errorsByCode)) errors += n;
    }
    return { requests: all.count, errors, p99Ms: all.percentileMs(99) };
  }

  /** Closes the current one-second window of the timeline. */
  tick(): void {
    const w = this.window;
    this.timeline.push({
      tSec: Math.round((performance.now() - this.startMs) / 1000),
      requests: w.count,
      errors: this.windowErrors,
      p50Ms: w.percentileMs(50),
      p99Ms: w.percentileMs(99),
      maxMs: w.maxUs / 1000,
    });
    w.reset();
    this.windowErrors = 0;
  }
}
