/**
 * Bench-only stage timestamps of write batches, on only when PLAT_WRITE_TRACE names a directory
 * (set by hand for a bench run, read by bench/write-trace-summary.ts; a production server never does, and then every call here is
 * one branch on a constant). Each thread (the front's pool, each shard actor) appends one JSON
 * line per batch to `<dir>/<role>-<pid>-<thread>.jsonl`: the absolute times (ms since the epoch,
 * comparable across threads) at which the batch passed each stage, named by the caller.
 */
import { appendFileSync, mkdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { threadCpuTicks } from '../metrics/process-metrics.js';

const DIR = process.env.PLAT_WRITE_TRACE ?? '';
/** lines kept before one append (a bench's batches, not a per-batch syscall) */
const FLUSH_EVERY = 200;

export const tracing = DIR !== '';

/** The stages of one batch, in the order they happen; ops: the batch's operation count. */
export interface BatchTrace {
  ops: number;
  kinds: string;
  t: Record<string, number>;
  /** counts worth keeping beside the times (batches in flight when sent, ...) */
  n: Record<string, number>;
}

const lines: string[] = [];
let file = '';
let flushedAt = 0;

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** A new trace of a batch (undefined when tracing is off). */
export function startTrace(ops: readonly { op: string }[]): BatchTrace | undefined {
  if (!tracing) return undefined;
  return { ops: ops.length, kinds: [...new Set(ops.map((o) => o.op))].join(','), t: { start: now() }, n: {} };
}

/** Marks the time the batch reached a stage. */
export function mark(trace: BatchTrace | undefined, stage: string): void {
  if (trace) trace.t[stage] = now();
}

/** Records a finished batch of this thread (role: 'front' or 'actor'). */
export function endTrace(trace: BatchTrace | undefined, role: string): void {
  if (!trace) return;
  trace.t.end = now();
  lines.push(JSON.stringify(trace));
  // the kernel's id of this thread (/proc/thread-self), to find it in the thread samples
  if (!file)
    file = join(DIR, `${role}-${process.pid}-${threadId}-${readlinkSync('/proc/thread-self').split('/').pop()}.jsonl`);
  if (lines.length >= FLUSH_EVERY || trace.t.end - flushedAt > 1000) flushTrace();
}

/** Appends the lines kept so far (also called at the end of a bench). */
export function flushTrace(): void {
  if (!file || !lines.length) return;
  flushedAt = now();
  appendFileSync(file, lines.join('\n') + '\n');
  lines.length = 0;
}

/** Appends every thread's CPU ticks to `<dir>/threads-<pid>.jsonl` once a second (front thread). */
export function sampleThreads(): void {
  if (!tracing) return;
  // made here (the pool's constructor, before any actor starts): a directory that did not
  // exist made the first append throw, which ended the server in the middle of a bench run
  mkdirSync(DIR, { recursive: true });
  const out = join(DIR, `threads-${process.pid}.jsonl`);
  setInterval(() => {
    appendFileSync(out, JSON.stringify({ at: now(), ticks: Object.fromEntries(threadCpuTicks()) }) + '\n');
    flushTrace();
  }, 1000).unref();
}
