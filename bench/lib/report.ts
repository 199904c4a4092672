/** Benchmark results: rows, target verdicts, and their markdown rendering for docs/benchmarks.md. */
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { appendReportSection } from './report-writer.js';

export interface Row {
  scenario: string;
  subject: string;
  throughput: number;
  unit: string;
  p50Ms?: number;
  p99Ms?: number;
  /** throughput divided by the ceiling's of the same scenario */
  ratio?: number;
  /** CPU time of the measured process (all its threads) per request or delivery, in µs */
  cpuUs?: number;
  /** the part of cpuUs spent on the process's main (front) thread */
  mainCpuUs?: number;
  errors?: number;
}

export interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export interface ScenarioResult {
  name: string;
  rows: Row[];
  verdicts: Verdict[];
  commands: string[];
  notes: string[];
}

export interface RunInfo {
  started: Date;
  /** share of all CPUs busy in the second before the run (other work on the machine) */
  backgroundBusy: number;
  durationSec: number;
  connections: number;
  rounds: number;
  argv: string[];
}

const fmt = (n: number | undefined, digits = 2): string =>
  n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** The commit measured, and whether server sources differed from it. */
export function sourceState(cwd: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'workers'], { cwd, encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean).length;
    return dirty ? `${head} with ${dirty} uncommitted change(s) under src/ and workers/` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export function machineInfo(info: RunInfo, cwd: string): string[] {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return [
    `- CPU: ${cpus.length} × ${model}${cpus[0]?.speed ? ` @ ${cpus[0].speed} MHz` : ''}`,
    `- Memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- OS: ${os.type()} ${os.release()} (${os.arch()}), Node ${process.version}`,
    `- Server build: ${sourceState(cwd)}`,
    `- Background load: ${(100 * info.backgroundBusy).toFixed(0)}% of all CPUs busy just before the run; load average at the end ${load}`,
  ];
}

function cpuCell(row: Row): string {
  if (row.cpuUs === undefined) return '–';
  return row.mainCpuUs === undefined ? fmt(row.cpuUs, 1) : `${fmt(row.cpuUs, 1)} (main ${fmt(row.mainCpuUs, 1)})`;
}

export function resultsTable(results: ScenarioResult[]): string {
  const lines = [
    '| Scenario | Subject | Throughput | p50 (ms) | p99 (ms) | vs ceiling | CPU/op (µs) | Errors |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    for (const row of r.rows) {
      const ratio = row.ratio === undefined ? '–' : `${(row.ratio * 100).toFixed(1)}%`;
      lines.push(
        `| ${row.scenario} | ${row.subject} | ${fmtInt(row.throughput)} ${row.unit} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${ratio} | ${cpuCell(row)} | ${row.errors ?? '–'} |`,
      );
    }
  }
  return lines.join('\n');
}

export function verdictTable(results: ScenarioResult[]): string {
  const lines = ['| Target | Measured | Met |', '| --- | --- | --- |'];
  for (const r of results)
    for (const v of r.verdicts) lines.push(`| ${v.target} | ${v.measured} | ${v.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

export function renderSection(info: RunInfo, results: ScenarioResult[], cwd: string): string {
  const out = [
    `## Run of ${info.started.toISOString().replace(/\.\d+Z$/, 'Z')}`,
    '',
    ...machineInfo(info, cwd),
    `- Invocation: \`npm run bench${info.argv.length ? ' -- ' + info.argv.join(' ') : ''}\` (duration ${info.durationSec}s per measurement after a 2 s warm-up, ${info.connections} connections, best of ${info.rounds} alternating rounds for get/list/create)`,
    '',
    '### Figures',
    '',
    resultsTable(results),
    '',
    "CPU/op: CPU time of the measured process, all threads (front thread, shard actors, LMDB), per request or per delivered watch event, and in brackets its main thread's share (the uWS front thread); other load on the machine disturbs it less than throughput.",
    '',
    '### Targets',
    '',
    verdictTable(results),
    '',
  ];
  const notes = results.flatMap((r) => r.notes.map((n) => `- ${r.name}: ${n}`));
  if (notes.length) out.push('### Notes', '', ...notes, '');
  out.push('### Commands', '', '```sh', ...results.flatMap((r) => r.commands), '```', '');
  return out.join('\n');
}

const HEADER = `# Benchmarks

Loopback load figures for the API server, each next to a ceiling measured in the same run:
a bare uWebSockets.js server (\`bench/hello.ts\`) answering with a body of the same byte size,
and for writes raw LMDB batched puts. Produced by \`npm run bench\` (\`bench/run.ts\`); every run
appends a dated section below. Benchmarks are not tests: numbers depend on the machine, and the
load generator, the server and the ceiling share its CPUs.

Scenarios: \`get\` (one ~1 KB ConfigMap, wrk), \`list\` (500 ConfigMaps in one namespace, wrk),
\`create\` (durable CREATE, wrk with \`bench/template-create.lua\`: unique names, non-201 counted as errors),
\`watch\` (1,000 watchers on one namespace, a paced writer, write-to-delivery latency from a
timestamp annotation, server RSS per idle watcher).

Usage: \`npm run bench [-- <scenario...>] [--duration 10s] [--connections 64] [--rounds 2]
[--wait-quiet 10m] [--cpu-prof DIR] [--record]\`; only \`--record\` appends a section here. get, list and create alternate the server and
its ceilings for \`--rounds\` rounds and keep the best of each; \`--wait-quiet\` waits (bounded) for
the machine to be mostly idle first; \`--cpu-prof DIR\` writes the server's V8 profiles, ranked by
\`node dist/bench/profile-summary.js DIR/*.cpuprofile\`.
`;

/** Appends a section to docs/benchmarks.md (its header first if the file is missing or blank). */
export function appendToDoc(path: string, section: string): void {
  appendReportSection(path, HEADER, section);
}
