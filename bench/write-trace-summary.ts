/**
 * Where a write batch's latency goes, from the stage times a server wrote with
 * PLAT_WRITE_TRACE=<dir> (src/actors/write-trace.ts), and which thread was busy meanwhile:
 *
 *   PLAT_WRITE_TRACE=/tmp/t nice -n 10 node dist/bench/run.js create --duration 5s --rounds 1 --no-doc
 *   node dist/bench/write-trace-summary.js /tmp/t [--kinds create] [--window 5]
 *
 * Prints, per role (front pool, shard actor), the median and 90th percentile of the time between
 * consecutive stages of batches holding only the given kinds, the batch size, and the CPU share
 * of one core of every thread over the busiest `--window` seconds of the thread samples (the
 * front thread is the process id, a shard actor's thread is named in its trace file's name).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile } from './lib/stats.js';
import type { BatchTrace } from '../src/actors/write-trace.js';

const ORDER: Record<string, string[]> = {
  front: ['start', 'sent', 'replied', 'end'],
  actor: ['start', 'turn', 'executed', 'prevWritten', 'written', 'flushed', 'prevPublished', 'end'],
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { kinds: { type: 'string', default: 'create,patch' }, window: { type: 'string', default: '5' } },
});
const dir = positionals[0];
if (!dir) throw new Error('usage: write-trace-summary <dir> [--kinds create,patch] [--window 5]');
const kinds = new Set(values.kinds.split(','));
const files = readdirSync(dir);

function fmt(xs: number[]): string {
  return xs.length ? `${percentile(xs, 50).toFixed(2)} / ${percentile(xs, 90).toFixed(2)}` : '–';
}

/** the span of the batches kept (thread samples outside it are another phase of the run) */
const span = { from: Infinity, to: -Infinity };

function summarise(role: string): void {
  const traces: BatchTrace[] = [];
  for (const f of files.filter((n) => n.startsWith(`${role}-`)))
    for (const line of readFileSync(join(dir!, f), 'utf8').split('\n'))
      if (line) traces.push(JSON.parse(line) as BatchTrace);
  const kept = traces.filter((t) => t.kinds.split(',').every((k) => kinds.has(k)));
  for (const t of kept) {
    span.from = Math.min(span.from, t.t.start!);
    span.to = Math.max(span.to, t.t.end!);
  }
  console.log(`\n${role}: ${kept.length} batches (of ${traces.length}); ms p50 / p90`);
  console.log(`  ops per batch ${fmt(kept.map((t) => t.ops))}`);
  for (const [k] of Object.entries(kept[0]?.n ?? {})) console.log(`  ${k} ${fmt(kept.map((t) => t.n[k] ?? 0))}`);
  const stages = ORDER[role]!;
  for (let i = 1; i < stages.length; i++) {
    const d = kept.flatMap((t) => {
      const b = t.t[stages[i]!];
      const a = stages
        .slice(0, i)
        .reverse()
        .map((s) => t.t[s])
        .find((x) => x !== undefined);
      return a !== undefined && b !== undefined ? [b - a] : [];
    });
    console.log(`  ${stages[i - 1]} -> ${stages[i]}: ${fmt(d)}`);
  }
  console.log(`  whole batch: ${fmt(kept.map((t) => t.t.end! - t.t.start!))}`);
  if (role === 'actor') heldAcks(traces);
}

/**
 * Acknowledgements held by a later commit: batches whose flush resolved only after the next
 * batch's transaction was written (lmdb-js' `db.flushed` read too late picks the newer flush).
 */
function heldAcks(traces: BatchTrace[]): void {
  const byStart = traces.filter((t) => t.t.written !== undefined).sort((a, b) => a.t.start! - b.t.start!);
  let held = 0;
  for (let i = 0; i + 1 < byStart.length; i++) if (byStart[i]!.t.flushed! >= byStart[i + 1]!.t.written!) held++;
  console.log(`  flushed after the next batch was written: ${held} of ${Math.max(0, byStart.length - 1)}`);
}

function threads(): void {
  const sampleFile = files.find((n) => n.startsWith('threads-'));
  if (!sampleFile) return;
  const pid = sampleFile.slice('threads-'.length, -'.jsonl'.length);
  const actors = new Set(files.filter((n) => n.startsWith('actor-')).map((n) => n.split('-').pop()!.slice(0, -6)));
  const samples = readFileSync(join(dir!, sampleFile), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { at: number; ticks: Record<string, number> })
    .filter((x) => x.at >= span.from - 1000 && x.at <= span.to + 1000);
  const w = Number(values.window);
  let best: { from: number; total: number } | undefined;
  const total = (a: (typeof samples)[number], b: (typeof samples)[number]): number =>
    Object.entries(b.ticks).reduce((s, [tid, t]) => s + t - (a.ticks[tid] ?? 0), 0);
  for (let i = 0; i + w < samples.length; i++) {
    const t = total(samples[i]!, samples[i + w]!);
    if (!best || t > best.total) best = { from: i, total: t };
  }
  if (!best) return;
  const a = samples[best.from]!;
  const b = samples[best.from + w]!;
  const sec = (b.at - a.at) / 1000;
  console.log(
    `\nthreads, busiest (of the traced batches' span) ${sec.toFixed(1)} s: % of one core (all threads ${(best.total / sec).toFixed(0)}%)`,
  );
  const rows = Object.entries(b.ticks)
    .map(([tid, t]) => ({ tid, pct: (t - (a.ticks[tid] ?? 0)) / sec }))
    .filter((r) => r.pct >= 1)
    .sort((x, y) => y.pct - x.pct);
  for (const r of rows)
    console.log(`  ${r.tid}${r.tid === pid ? ' front' : actors.has(r.tid) ? ' actor' : ''}: ${r.pct.toFixed(0)}%`);
}

summarise('front');
summarise('actor');
threads();
