/**
 * Reads the server's watch stage trace (PLAT_WATCH_TRACE, src/http/watch-trace.ts) for one
 * phase of the watch scenario: per stage, the p50 and p99 of the time since the writer sent
 * the PUT, to set beside the clients' write-to-delivery.
 */
import { existsSync, readFileSync } from 'node:fs';
import { percentile } from './lib/stats.js';
import { gcFile } from '../src/http/watch-trace.js';

/** Stage → [p50, p99] in ms since the writer's send, plus the flush shape. */
export interface StageFigures {
  events: number;
  stages: Record<string, [number, number]>;
  /** mean sends per flush and share of sends into a backlogged socket */
  sendsPerFlush: number;
  backloggedShare: number;
  eventsPerFlush: number;
  /** a flush's wall time from its start to its last send, p50 and p99 (ms) */
  flushMs: [number, number];
  /** a flush's time in its slices (the rest of its wall is the event loop between them), p50 and p99 (ms), and slices p50 */
  busyMs: [number, number];
  slicesP50: number;
  /** the front thread's garbage collections in the phase, by kind: count and total ms */
  gc: { scavenges: number; scavengeMs: number; major: number; majorMs: number; other: number; otherMs: number };
}

const STAGES: [string, number][] = [
  ['published (commit)', 2],
  ['front received', 3],
  ['flush began', 4],
  ['first write', 5],
  ['last write', 6],
];

/** The trace lines of events sent in [fromUs, toUs], summarised; undefined without a trace file. */
export function readStages(file: string | undefined, fromUs: number, toUs: number): StageFigures | undefined {
  if (!file || !existsSync(file)) return undefined;
  const rows: number[][] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line) as number[];
    if (r[1]! >= fromUs && r[1]! <= toUs) rows.push(r);
  }
  if (!rows.length) return undefined;
  const stages: Record<string, [number, number]> = {};
  for (const [name, col] of STAGES) {
    const xs = rows.filter((r) => r[col]! > 0).map((r) => (r[col]! - r[1]!) / 1000);
    if (xs.length) stages[name] = [percentile(xs, 50), percentile(xs, 99)];
  }
  // one row per event: a flush's figures are repeated per event it carried
  const flushes = new Map<number, number[]>();
  for (const r of rows) flushes.set(r[4]!, r);
  let sends = 0,
    backlogged = 0;
  for (const r of flushes.values()) {
    sends += r[7]!;
    backlogged += r[8]!;
  }
  const fl = [...flushes.values()];
  return {
    events: rows.length,
    stages,
    sendsPerFlush: sends / Math.max(1, flushes.size),
    backloggedShare: backlogged / Math.max(1, sends),
    eventsPerFlush: rows.length / Math.max(1, flushes.size),
    flushMs: [50, 99].map((q) =>
      percentile(
        fl.map((r) => (r[6]! - r[4]!) / 1000),
        q,
      ),
    ) as [number, number],
    busyMs: [50, 99].map((q) =>
      percentile(
        fl.map((r) => (r[9] ?? 0) / 1000),
        q,
      ),
    ) as [number, number],
    slicesP50: percentile(
      fl.map((r) => r[10] ?? 0),
      50,
    ),
    gc: readGc(file, fromUs, toUs),
  };
}

/** The front thread's collections that began in [fromUs, toUs] (kind 1: scavenge, 4: mark-compact). */
function readGc(file: string, fromUs: number, toUs: number): StageFigures['gc'] {
  const gc = { scavenges: 0, scavengeMs: 0, major: 0, majorMs: 0, other: 0, otherMs: 0 };
  const path = gcFile(file);
  if (!existsSync(path)) return gc;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    const [at, kind, us] = JSON.parse(line) as [number, number, number];
    if (at < fromUs || at > toUs) continue;
    if (kind === 1) {
      gc.scavenges++;
      gc.scavengeMs += us / 1000;
    } else if (kind === 4) {
      gc.major++;
      gc.majorMs += us / 1000;
    } else {
      gc.other++;
      gc.otherMs += us / 1000;
    }
  }
  return gc;
}

/** One log line: each stage's p50/p99 since the send. */
export function formatStages(f: StageFigures): string {
  const parts = Object.entries(f.stages).map(([k, [a, b]]) => `${k} ${a.toFixed(1)}/${b.toFixed(1)}`);
  return (
    `stages since the PUT was sent, p50/p99 ms (${f.events} events): ${parts.join(', ')}; ` +
    `${f.eventsPerFlush.toFixed(1)} events and ${f.sendsPerFlush.toFixed(0)} sends per flush, ` +
    `flush wall p50/p99 ${f.flushMs[0].toFixed(1)}/${f.flushMs[1].toFixed(1)} ms (in its slices ${f.busyMs[0].toFixed(1)}/${f.busyMs[1].toFixed(1)} ms, ${f.slicesP50} slices p50), ` +
    `${(100 * f.backloggedShare).toFixed(1)}% into a backlogged socket; front GCs: ${f.gc.scavenges} scavenges (${f.gc.scavengeMs.toFixed(1)} ms), ` +
    `${f.gc.major} mark-compacts (${f.gc.majorMs.toFixed(1)} ms), ${f.gc.other} other (${f.gc.otherMs.toFixed(1)} ms)`
  );
}
