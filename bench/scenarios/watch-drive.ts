/**
 * Drives watch targets (the server, the hello-world fan-out): opens watchers in a forked
 * client process (bench/watch-clients.ts) and measures the target's memory per idle watcher;
 * each phase runs a paced writer in this process while the clients count deliveries and
 * their latency.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, machineTicks, rssBytes, sleep, type Child } from '../lib/procs.js';
import { configMapJson, request } from '../lib/http.js';
import { Histogram, nowUs } from '../lib/stats.js';
import type { ClientCommand, ClientReply, OpenReply, StatsReply } from '../watch-clients.js';
import type { Ctx } from './common.js';
import { formatStages, readStages } from '../watch-trace-read.js';
import { threadCpuTicks } from '../../src/metrics/process-metrics.js';

const CLIENTS_JS = fileURLToPath(new URL('../watch-clients.js', import.meta.url));
const MAX_IN_FLIGHT = 256;
const DRAIN_MAX_MS = 60_000;
const QUIET_POLLS = 3;

export interface WatchTarget {
  subject: string;
  child: Child;
  watchPath: string;
  /** path of object i (PUT target) */
  objectPath(i: number): string;
  objects: number;
  bodyBytes: number;
}

export interface Phase {
  rate: number;
  writesOk: number;
  writesFailed: number;
  writeRate: number;
  deliveries: number;
  expected: number;
  deliveriesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** the writer's PUT latency (request sent to response read): the write's share of write-to-delivery */
  putP50Ms: number;
  putP99Ms: number;
  clientCpuShare: number;
  targetCpuShare: number;
  writerCpuShare: number;
  /** share of all CPUs busy (any process, kernel included) during the writes */
  machineBusy: number;
  /** CPU time of the target process per delivered event, in microseconds */
  targetCpuUsPerDelivery: number;
  /** the same, its main thread only */
  targetMainCpuUsPerDelivery: number;
  /** watch streams the target ended or dropped so far (of those opened) */
  streamsEnded: number;
  /** how long after the writer's last response the clients' last delivery came (ms; 0 if before) */
  drainLagMs: number;
}

export class Clients {
  private readonly proc: ChildProcess;
  private waiting: ((r: ClientReply) => void) | undefined;

  constructor() {
    this.proc = fork(CLIENTS_JS, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.proc.on('message', (m) => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.(m as ClientReply);
    });
  }

  ask<R extends ClientReply>(c: ClientCommand, timeoutMs = 120_000): Promise<R> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`watch clients did not answer ${c.cmd}`)), timeoutMs);
      this.waiting = (r) => {
        clearTimeout(timer);
        resolve(r as R);
      };
      this.proc.send(c);
    });
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    await this.ask({ cmd: 'close' }).catch(() => this.proc.kill('SIGKILL'));
    await exited;
  }
}

/** Sends `total` updates at `rate` per second (at most MAX_IN_FLIGHT outstanding), stopping at the deadline. */
async function writer(
  t: WatchTarget,
  total: number,
  rate: number,
  deadlineMs: number,
): Promise<{ ok: number; failed: number; failures: Record<string, number>; elapsedSec: number; put: Histogram }> {
  const put = new Histogram();
  let ok = 0,
    failed = 0,
    inFlight = 0;
  const failures: Record<string, number> = {};
  const fail = (why: string): void => {
    failed++;
    failures[why] = (failures[why] ?? 0) + 1;
  };
  const pending = new Set<Promise<void>>();
  const start = performance.now();
  for (let i = 0; i < total && performance.now() - start < deadlineMs; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait >= 1) await sleep(wait);
    while (inFlight >= MAX_IN_FLIGHT) await Promise.race(pending);
    const n = i % t.objects;
    const body = configMapJson(`w-${n}`, t.bodyBytes, { 'bench-ts': String(nowUs()) });
    inFlight++;
    const sentUs = nowUs();
    const p: Promise<void> = request(t.child.url, 'PUT', t.objectPath(n), body)
      .then(
        (r) => {
          put.record((nowUs() - sentUs) / 1000);
          if (r.status === 200) ok++;
          else fail(`${r.status} ${r.text.slice(0, 120)}`);
        },
        (e: Error) => fail(e.message),
      )
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  }
  await Promise.all(pending);
  return { ok, failed, failures, elapsedSec: (performance.now() - start) / 1000, put };
}

/** Polls until every expected event arrived, nothing new came for QUIET_POLLS seconds, or maxMs passed. */
async function drain(clients: Clients, expected: number, maxMs: number): Promise<StatsReply> {
  const until = performance.now() + maxMs;
  let last = await clients.ask<StatsReply>({ cmd: 'stats' });
  let still = 0;
  while (last.events < expected && still < QUIET_POLLS && performance.now() < until) {
    await sleep(1000);
    const now = await clients.ask<StatsReply>({ cmd: 'stats' });
    still = now.events === last.events ? still + 1 : 0;
    last = now;
  }
  return last;
}

export const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;

/** Open watchers on one target, with the target's resident memory per idle watcher. */
export interface WatchSession {
  target: WatchTarget;
  clients: Clients;
  opened: number;
  rssPerWatcherBytes: number;
}

/** Runs the writer at `rate` for writeSec against an open session and collects what the clients saw. */
export async function runPhase(ctx: Ctx, session: WatchSession, rate: number, writeSec: number): Promise<Phase> {
  const { target: t, clients } = session;
  await clients.ask({ cmd: 'reset' });
  const cpu0 = cpuSeconds(t.child.pid);
  const main0 = cpuSeconds(t.child.pid, true);
  const threads0 = threadCpuTicks(t.child.pid);
  const writerCpu0 = process.cpuUsage();
  const ticks0 = machineTicks();
  const startUs = nowUs();
  const w = await writer(t, rate * writeSec, rate, writeSec * 3000);
  const ticks1 = machineTicks();
  const writerCpu = process.cpuUsage(writerCpu0);
  if (w.failed) ctx.log(`  ${t.subject} @ ${rate}/s: failed writes: ${JSON.stringify(w.failures)}`);
  const expected = w.ok * session.opened;
  const stats = await drain(clients, expected, DRAIN_MAX_MS);
  const endUs = nowUs();
  const windowSec = Math.max(w.elapsedSec, (stats.lastAtUs - startUs) / 1e6);
  const targetCpuSec = cpuSeconds(t.child.pid) - cpu0;
  const mainCpuSec = cpuSeconds(t.child.pid, true) - main0;
  const hist = new Histogram();
  hist.mergeSparse(stats.latency);
  const p: Phase = {
    rate,
    writesOk: w.ok,
    writesFailed: w.failed,
    writeRate: w.ok / w.elapsedSec,
    deliveries: stats.events,
    expected,
    deliveriesPerSec: stats.events / windowSec,
    p50Ms: hist.percentile(50),
    p99Ms: hist.percentile(99),
    putP50Ms: w.put.percentile(50),
    putP99Ms: w.put.percentile(99),
    clientCpuShare: stats.cpuSec / windowSec,
    targetCpuShare: targetCpuSec / windowSec,
    writerCpuShare: (writerCpu.user + writerCpu.system) / 1e6 / w.elapsedSec,
    machineBusy: (ticks1.busy - ticks0.busy) / Math.max(1, ticks1.total - ticks0.total),
    targetCpuUsPerDelivery: (targetCpuSec * 1e6) / Math.max(1, stats.events),
    targetMainCpuUsPerDelivery: (mainCpuSec * 1e6) / Math.max(1, stats.events),
    streamsEnded: stats.ended,
    drainLagMs: Math.max(0, (stats.lastAtUs - startUs) / 1000 - w.elapsedSec * 1000),
  };
  ctx.log(
    `  ${t.subject} @ ${rate}/s: ${p.writesOk} writes (${p.writeRate.toFixed(0)}/s, ${p.writesFailed} failed), ` +
      `${p.deliveries}/${p.expected} deliveries, ${p.deliveriesPerSec.toFixed(0)}/s, p50 ${p.p50Ms.toFixed(1)} ms, p99 ${p.p99Ms.toFixed(1)} ms ` +
      `(PUT p50 ${p.putP50Ms.toFixed(1)}, p99 ${p.putP99Ms.toFixed(1)} ms); last delivery ${p.drainLagMs.toFixed(0)} ms after the last PUT's response; ` +
      `CPU (of one core): target ${pct(p.targetCpuShare)}, clients ${pct(p.clientCpuShare)}, writer ${pct(p.writerCpuShare)}; machine ${pct(p.machineBusy)} busy`,
  );
  const clientUs = (stats.cpuSec * 1e6) / Math.max(1, stats.events);
  ctx.log(
    `  ${t.subject} @ ${rate}/s: ${threadSplit(threads0, t.child.pid, w.ok)}; watch clients ${clientUs.toFixed(2)} µs CPU per delivery`,
  );
  const traceFile = process.env.PLAT_WATCH_TRACE;
  if (traceFile) {
    // the server appends its trace about once a second
    await sleep(1500);
    const stages = readStages(traceFile, startUs, endUs);
    if (stages) ctx.log(`  ${t.subject} @ ${rate}/s: ${formatStages(stages)}`);
  }
  return p;
}

/**
 * The target's CPU during a phase by thread, in µs per write: its main thread (the front), then
 * its busiest other threads (actors, LMDB, V8's GC helpers: Linux names them all "node").
 */
function threadSplit(before: Map<string, number>, pid: number, writes: number): string {
  const us = (tid: string, ticks: number): number => ((ticks - (before.get(tid) ?? 0)) * 1e4) / Math.max(1, writes);
  const main = String(pid);
  const others: [number, number][] = [];
  let mainUs = 0;
  for (const [tid, ticks] of threadCpuTicks(pid)) {
    if (tid === main) mainUs = us(tid, ticks);
    else others.push([us(tid, ticks), Number(tid) - pid]);
  }
  others.sort((a, b) => b[0] - a[0]);
  const rest = others.slice(4).reduce((a, b) => a + b[0], 0);
  // thread id − pid: V8's platform workers (GC helpers of every isolate) are started first, +2 … +5
  const top = others.slice(0, 4).map(([v, at]) => `${v.toFixed(0)} (+${at})`);
  return `CPU µs per write by thread: main ${mainUs.toFixed(0)}; busiest others (thread id − pid) ${top.join(', ')}; the other ${others.length - top.length} together ${rest.toFixed(0)}`;
}

/** Opens the watchers (in their own client process) and measures idle memory. */
export async function openWatchers(ctx: Ctx, t: WatchTarget, watchers: number): Promise<WatchSession> {
  await sleep(1000);
  const rssBefore = rssBytes(t.child.pid);
  const clients = new Clients();
  try {
    const open = await clients.ask<OpenReply>({
      cmd: 'open',
      url: t.child.url + t.watchPath,
      count: watchers,
      timeoutMs: 60_000,
    });
    if (open.failed)
      ctx.log(`  ${t.subject}: ${open.failed} watches failed to open (${JSON.stringify(open.statuses)})`);
    await sleep(2000);
    const rssPerWatcherBytes = (rssBytes(t.child.pid) - rssBefore) / Math.max(1, open.opened);
    ctx.log(
      `  ${t.subject}: ${open.opened} watchers open, ${(rssPerWatcherBytes / 1000).toFixed(1)} KB RSS per idle watcher`,
    );
    return { target: t, clients, opened: open.opened, rssPerWatcherBytes };
  } catch (e) {
    await clients.close();
    throw e;
  }
}

export function closeWatchers(s: WatchSession): Promise<void> {
  return s.clients.close();
}
