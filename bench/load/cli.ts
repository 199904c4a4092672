/**
 * The load CLI: `npm run bench -- <scenario...> [--server URL] [--kubeconfig F] [--token T]
 * [--duration 60s] [--concurrency N] [--out DIR] ...` (bench/load/args.ts for every flag).
 * Without --server it starts a fresh server (plain HTTP, own data directory) and stops it at
 * the end. Every scenario runs with a fresh Recorder; a progress line shows on long runs; the
 * first Ctrl-C stops the running scenario and writes a partial report, a second one exits.
 * Writes report.json, report.md and three SVG charts to --out (default bench-out/<time>).
 */
import { join } from 'node:path';
import { cpuSeconds, rssBytes, startServer, type ServerChild } from '../lib/procs.js';
import { writeReportDir } from '../lib/report-writer.js';
import { parseLoadArgs, type LoadArgs } from './args.js';
import { Client } from './client.js';
import { sleep } from './engine.js';
import { loadKubeconfig, type Credentials } from './kubeconfig.js';
import { renderMarkdown } from './markdown.js';
import { delta, requestCounts, scalar, type Counts } from './metrics.js';
import { Recorder } from './recorder.js';
import {
  countsOf,
  judge,
  machine,
  operations,
  SCHEMA_VERSION,
  type Report,
  type ScenarioReport,
  type ServerUsage,
} from './report.js';
import type { ScenarioCtx } from './scenarios/ctx.js';
import { loadRunner } from '../scenario-registry.js';
import { latencyCdf, latencyOverTime, throughputBars } from './svg.js';

const METRICS_SETTLE_MS = 10_000;
/** bench CPU (cores, all threads) above which a scenario's figures are flagged as possibly client-bound */
const CLIENT_BOUND_CORES = 0.85;

interface Sample {
  rss?: number;
  cpu?: number;
}

async function sampler(client: Client, pid: number | undefined): Promise<Sample> {
  if (pid !== undefined) {
    try {
      return { rss: rssBytes(pid), cpu: cpuSeconds(pid) };
    } catch {
      return {};
    }
  }
  const text = await client.metricsText();
  return text
    ? { rss: scalar(text, 'process_resident_memory_bytes'), cpu: scalar(text, 'process_cpu_seconds_total') }
    : {};
}

function usage(samples: Sample[], sec: number, source: ServerUsage['source']): ServerUsage {
  const rss = samples.map((s) => s.rss).filter((x): x is number => x !== undefined);
  const cpu = samples.map((s) => s.cpu).filter((x): x is number => x !== undefined);
  if (!rss.length && !cpu.length)
    return {
      source: 'unavailable',
      rssStartBytes: null,
      rssEndBytes: null,
      rssPeakBytes: null,
      cpuSeconds: null,
      cpuCores: null,
    };
  const cpuSec = cpu.length >= 2 ? cpu[cpu.length - 1]! - cpu[0]! : null;
  return {
    source,
    rssStartBytes: rss[0] ?? null,
    rssEndBytes: rss.at(-1) ?? null,
    rssPeakBytes: rss.length ? Math.max(...rss) : null,
    cpuSeconds: cpuSec,
    cpuCores: cpuSec === null ? null : cpuSec / Math.max(0.001, sec),
  };
}

const sentCounts = (r: Report): Counts =>
  new Map(r.requestCounts.map((c) => [`${c.verb}|${c.group}|${c.resource}|${c.code}`, c.count]));

function differences(sent: Counts, seen: Counts): Report['metricsCheck']['differences'] {
  const keys = new Set([...sent.keys(), ...seen.keys()]);
  return [...keys]
    .filter((k) => (sent.get(k) ?? 0) !== (seen.get(k) ?? 0))
    .map((k) => ({ key: k, sent: sent.get(k) ?? 0, counted: seen.get(k) ?? 0 }));
}

/** What every scenario run shares. */
interface Run {
  client: Client;
  args: LoadArgs;
  stop: AbortSignal;
  /** the server process to sample from /proc, if local */
  pid?: number;
  tag: string;
  showProgress: boolean;
  log(msg: string): void;
}

function progressLine(name: string, sec: number, rec: Recorder, elapsedSec: number): string {
  const m = rec.measured();
  const rate = Math.round(m.requests / Math.max(0.001, elapsedSec)).toLocaleString('en-US');
  return `[${name} ${sec}s] ${m.requests.toLocaleString('en-US')} requests, ${rate}/s, p99 ${Number.isFinite(m.p99Ms) ? m.p99Ms.toFixed(1) : '–'} ms, ${m.errors} errors`;
}

/** Runs one scenario with a fresh Recorder, a one-second tick (timeline, server sample, progress) and its report. */
async function runScenario(run: Run, name: string, index: number): Promise<{ report: ScenarioReport; rec: Recorder }> {
  const { client, args, pid } = run;
  const rec = new Recorder();
  client.recorder = rec;
  const samples: Sample[] = [await sampler(client, pid)];
  const ctx: ScenarioCtx = {
    client,
    opts: args.opts,
    stop: run.stop,
    tag: `${run.tag}-${index}`,
    log: run.log,
    figures: {},
    params: {},
    notes: [],
    ceilings: [],
    serverRss: async () => (await sampler(client, pid)).rss,
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let ticks = 0;
  const tty = process.stderr.isTTY;
  const timer = setInterval(() => {
    rec.tick();
    ticks++;
    void sampler(client, pid).then((x) => samples.push(x));
    if (!run.showProgress || (!tty && ticks % 10 !== 0)) return;
    const line = progressLine(name, ticks, rec, (performance.now() - t0) / 1000);
    process.stderr.write(tty ? `\r${line}\x1b[K` : line + '\n');
  }, 1000);
  run.log(`== ${name}`);
  let error: string | null = null;
  try {
    await loadRunner(name)!(ctx);
  } catch (e) {
    error = (e as Error).message;
    run.log(`${name} failed: ${error}`);
  } finally {
    clearInterval(timer);
    rec.tick();
    if (run.showProgress && tty) process.stderr.write('\n');
  }
  const sec = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const clientCpu = (cpu.user + cpu.system) / 1e6;
  if (clientCpu / sec > CLIENT_BOUND_CORES)
    ctx.notes.push(
      `the bench process used ${(clientCpu / sec).toFixed(2)} cores on average: the figures may be bounded by the client, not the server`,
    );
  samples.push(await sampler(client, pid));
  const ops = operations(rec);
  return {
    rec,
    report: {
      name,
      startedAt: new Date(Date.now() - sec * 1000).toISOString(),
      elapsedSec: sec,
      interrupted: run.stop.aborted,
      error,
      params: { durationSec: args.opts.durationSec, concurrency: args.opts.concurrency, ...ctx.params },
      operations: ops,
      timeline: rec.timeline,
      figures: Object.fromEntries(Object.entries(ctx.figures).map(([k, v]) => [k, Number.isFinite(v) ? v : null])),
      ceilings: ctx.ceilings,
      slo: judge(ops),
      server: usage(samples, sec, pid !== undefined ? 'proc' : 'metrics'),
      client: { cpuSeconds: clientCpu, cpuCores: clientCpu / sec },
      notes: ctx.notes,
    },
  };
}

/**
 * The server's apiserver_request_total change against what was sent. The server counts a
 * request once it is answered (a watch once it ends): poll for a bounded while.
 */
async function checkMetrics(client: Client, before: string, report: Report): Promise<Report['metricsCheck']> {
  const sent = sentCounts(report);
  const deadline = performance.now() + METRICS_SETTLE_MS;
  let check: Report['metricsCheck'] = { available: false, matched: false, differences: [] };
  for (let i = 0; i < 100; i++) {
    const after = await client.metricsText();
    if (after === undefined) break;
    const diffs = differences(sent, delta(requestCounts(before), requestCounts(after)));
    check = { available: true, matched: diffs.length === 0, differences: diffs };
    if (!diffs.length || performance.now() > deadline) break;
    await sleep(200);
  }
  return check;
}

function summarize(scenarios: ScenarioReport[]): Report['summary'] {
  const sum = { requests: 0, errors: 0, sloChecked: 0, sloFailed: 0 };
  for (const s of scenarios) {
    for (const o of s.operations) {
      sum.requests += o.requests;
      sum.errors += o.errors;
    }
    sum.sloChecked += s.slo.length;
    sum.sloFailed += s.slo.filter((v) => !v.met).length;
  }
  return sum;
}

function writeReport(out: string, report: Report): void {
  writeReportDir(out, {
    markdown: renderMarkdown(report),
    json: report,
    charts: {
      'latency-over-time.svg': latencyOverTime(report),
      'throughput.svg': throughputBars(report),
      'latency-cdf.svg': latencyCdf(report),
    },
  });
}

export async function loadMain(argv: string[]): Promise<number> {
  const args = parseLoadArgs(argv);
  let creds: Credentials = args.kubeconfig ? loadKubeconfig(args.kubeconfig, args.context) : {};
  if (args.token) creds = { ...creds, token: args.token };
  if (args.insecure) creds = { ...creds, insecure: true };
  const log = (m: string): void => {
    process.stderr.write(m + '\n');
  };
  let server: ServerChild | undefined;
  let url = args.server ?? (args.kubeconfig ? creds.server : undefined);
  if (!url) {
    server = await startServer([], args.serverArgs);
    url = server.url;
    log(`started a server at ${url} (data in ${server.dataDir})`);
  }
  const stopper = new AbortController();
  const onSigint = (): void => {
    if (stopper.signal.aborted) process.exit(130);
    log('\nstopping (Ctrl-C again to quit at once): finishing in-flight requests, writing a partial report');
    stopper.abort();
  };
  process.on('SIGINT', onSigint);
  const client = new Client(url, creds, args.opts.concurrency, new Recorder());
  const out = args.out ?? join('bench-out', new Date().toISOString().replace(/[:.]/g, '-'));
  const startedAt = new Date().toISOString();
  try {
    await client.preflight();
    const before = await client.metricsText();
    const run: Run = {
      client,
      args,
      stop: stopper.signal,
      pid: server?.pid ?? args.serverPid,
      log,
      tag: `bench-${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`,
      showProgress: args.progress ?? (process.stderr.isTTY || args.opts.durationSec >= 10),
    };
    const done: { report: ScenarioReport; rec: Recorder }[] = [];
    for (const name of args.scenarios) {
      if (stopper.signal.aborted) break;
      done.push(await runScenario(run, name, done.length));
    }
    const scenarios = done.map((d) => d.report);
    const report: Report = {
      schemaVersion: SCHEMA_VERSION,
      tool: 'platform-apiserver bench (bench/load)',
      startedAt,
      endedAt: '',
      interrupted: stopper.signal.aborted,
      argv,
      target: {
        url,
        startedByBench: !!server,
        tls: client.tls,
        auth: creds.token ? 'token' : creds.cert ? 'client-certificate' : 'none',
      },
      machine: machine(),
      options: { ...args.opts },
      scenarios,
      requestCounts: countsOf(done.map((d) => d.rec)),
      metricsCheck: { available: false, matched: false, differences: [] },
      summary: summarize(scenarios),
    };
    if (before !== undefined) report.metricsCheck = await checkMetrics(client, before, report);
    report.endedAt = new Date().toISOString();
    writeReport(out, report);
    const sum = report.summary;
    log(
      `report: ${join(out, 'report.md')} (${sum.requests} requests, ${sum.errors} errors, SLOs met ${sum.sloChecked - sum.sloFailed}/${sum.sloChecked}${report.interrupted ? ', interrupted' : ''})`,
    );
    return scenarios.some((x) => x.error) ? 1 : 0;
  } finally {
    process.off('SIGINT', onSigint);
    client.close();
    if (server) {
      await server.stop();
      server.cleanup();
    }
  }
}
