/**
 * Leveled logging as upstream components do it (klog): `-v`/`--v` 0-10 chooses how much is
 * written, `--logging-format` text (klog's `I1126 08:00:00.000000 msg key="value"` shape) or
 * json (one object a line: ts, v, msg, then the keys). Lines go to standard error.
 *
 * Startup and shutdown lines are written at once (synchronously: they must precede an exit).
 * Per-request lines (`-v=3`) go through a bounded in-memory queue flushed by asynchronous
 * writes (libuv's thread pool), so the front thread never waits on the terminal or the
 * disk; when the queue is full, lines are dropped and counted, never queued without bound.
 */
import { write, writeSync } from 'node:fs';

export type LogFormat = 'text' | 'json';
export type LogValue = string | number | boolean | readonly string[] | undefined;
export type LogFields = Record<string, LogValue>;

const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
const STDERR = 2;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** klog's header: severity letter, MMDD and the time with microseconds (UTC). */
function klogHeader(severity: string, now: Date): string {
  return `${severity}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds(), 3)}000`;
}

function textValue(v: LogValue): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export class Logger {
  /** lines dropped because the request-line queue was full */
  dropped = 0;
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;

  constructor(
    readonly verbosity: number,
    readonly format: LogFormat,
    private readonly fd = STDERR,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Whether lines of this verbosity are written (callers skip building them otherwise). */
  enabled(level: number): boolean {
    return this.verbosity >= level;
  }

  info(msg: string, fields?: LogFields, level = 0): void {
    if (this.enabled(level)) this.writeNow(this.line('I', level, msg, fields));
  }

  warn(msg: string, fields?: LogFields): void {
    if (this.verbosity >= 0) this.writeNow(this.line('W', 0, msg, fields));
  }

  error(msg: string, fields?: LogFields): void {
    if (this.verbosity >= 0) this.writeNow(this.line('E', 0, msg, fields));
  }

  /** A line of the hot path (e.g. one per request): queued, written asynchronously. */
  queued(level: number, msg: string, fields: LogFields): void {
    if (!this.enabled(level)) return;
    const line = this.line('I', level, msg, fields);
    if (this.queuedBytes + line.length > MAX_QUEUED_BYTES) {
      this.dropped++;
      return;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    if (!this.writing) this.flushSoon();
  }

  /** Writes what is queued (at shutdown, before the exit). */
  flushSync(): void {
    if (this.queue.length === 0) return;
    const text = this.queue.join('');
    this.queue = [];
    this.queuedBytes = 0;
    try {
      writeSync(this.fd, text);
    } catch {
      /* standard error gone: nothing to report to */
    }
  }

  /** One formatted line (with its newline). */
  line(severity: 'I' | 'W' | 'E', level: number, msg: string, fields: LogFields = {}): string {
    const now = this.now();
    if (this.format === 'json') {
      const o: Record<string, unknown> = {
        ts: now.getTime() / 1000,
        ...(severity === 'I' ? { v: level } : {}),
        ...(severity === 'E' ? { level: 'error' } : {}),
        ...(severity === 'W' ? { level: 'warning' } : {}),
        msg,
      };
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) o[k] = v;
      return JSON.stringify(o) + '\n';
    }
    let s = `${klogHeader(severity, now)} ${msg}`;
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) s += ` ${k}=${textValue(v)}`;
    return s + '\n';
  }

  private writeNow(line: string): void {
    try {
      writeSync(this.fd, line);
    } catch {
      /* as above */
    }
  }

  private flushSoon(): void {
    this.writing = true;
    setImmediate(() => {
      const text = this.queue.join('');
      this.queue = [];
      this.queuedBytes = 0;
      if (!text) {
        this.writing = false;
        return;
      }
      write(this.fd, text, () => {
        if (this.queue.length) this.flushSoon();
        else this.writing = false;
      });
    });
  }
}

/** A logger that writes nothing (in-process servers in tests, tools). */
export const SILENT = new Logger(-1, 'text');
