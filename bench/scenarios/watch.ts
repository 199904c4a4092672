/**
 * Watch fan-out: 1,000 watchers on one namespace (in a forked client process) while a paced
 * writer in this process updates objects, each update carrying its send time in the
 * `bench-ts` annotation. Measures deliveries per second and write-to-delivery latency at the
 * target rate and at a tenth of it, and the server's resident memory per idle watcher. The
 * ceiling is the same clients and writer against the hello-world server in fan-out mode,
 * its phases alternating with the server's.
 */
import os from 'node:os';
import { startHello, startServer, type Child } from '../lib/procs.js';
import { configMapJson, ensureNamespace, expect, parallel, servedOverhead } from '../lib/http.js';
import type { Row, ScenarioResult, Verdict } from '../lib/report.js';
import type { Ctx } from './common.js';
import { closeWatchers, openWatchers, pct, runPhase, type Phase, type WatchSession } from './watch-drive.js';

const WATCHERS = 1000;
const OBJECTS = 20;
/** size of each ConfigMap as the server serves it (the hello ceiling echoes request bodies) */
const OBJECT_BYTES = 1024;
/** the saturating rate first, then issue 24's latency rate (500/s), then a tenth to see latency well below saturation */
const RATES = ratesOf(process.env.PLAT_BENCH_WATCH_RATES) ?? [1000, 500, 100];
const LATENCY_RATE = 500;

/**
 * PLAT_BENCH_WATCH_RATES=500,500 (experiments only): the phases to run instead of the three
 * rates, e.g. the latency rate several times over one server start for paired comparisons.
 */
function ratesOf(env: string | undefined): number[] | undefined {
  const rates = env
    ?.split(',')
    .map(Number)
    .filter((r) => r > 0);
  return rates?.length ? rates : undefined;
}
const MAX_WRITE_SEC = 5;
const NS = 'bench-watch';
const BASE_PATH = `/api/v1/namespaces/${NS}/configmaps`;
const watchPath = (rv: string): string => `${BASE_PATH}?watch=1&resourceVersion=${rv}&timeoutSeconds=600`;
const objectPath = (i: number): string => `${BASE_PATH}/w-${i}`;

interface Figures {
  subject: string;
  rssPerWatcherBytes: number;
  phases: Phase[];
}

/**
 * Starts the server (prefilled) and the fan-out ceiling, opens the watchers on both, then
 * alternates their phases rate by rate so both see the same machine conditions.
 */
async function measureBoth(ctx: Ctx, writeSec: number): Promise<{ s: Figures; h: Figures }> {
  const server = await startServer(ctx.serverNodeArgs);
  let hello: Child | undefined;
  const sessions: WatchSession[] = [];
  try {
    await ensureNamespace(server.url, NS);
    const size = OBJECT_BYTES - (await servedOverhead(server.url, NS));
    await parallel(OBJECTS, 8, async (i) => {
      await expect(server.url, 'POST', BASE_PATH, configMapJson(`w-${i}`, size, { 'bench-ts': '0' }), [201]);
    });
    const list = JSON.parse((await expect(server.url, 'GET', BASE_PATH, undefined, [200])).text) as {
      metadata: { resourceVersion: string };
    };
    const h = await startHello(OBJECT_BYTES, { fanout: true });
    hello = h;
    const ss = await openWatchers(
      ctx,
      {
        subject: 'apiserver',
        child: server,
        watchPath: watchPath(list.metadata.resourceVersion),
        objectPath,
        objects: OBJECTS,
        bodyBytes: size,
      },
      WATCHERS,
    );
    sessions.push(ss);
    const hs = await openWatchers(
      ctx,
      {
        subject: 'hello-world fan-out ceiling',
        child: h,
        watchPath: watchPath('1'),
        objectPath,
        objects: OBJECTS,
        bodyBytes: OBJECT_BYTES,
      },
      WATCHERS,
    );
    sessions.push(hs);
    const s: Figures = { subject: ss.target.subject, rssPerWatcherBytes: ss.rssPerWatcherBytes, phases: [] };
    const c: Figures = { subject: hs.target.subject, rssPerWatcherBytes: hs.rssPerWatcherBytes, phases: [] };
    for (const rate of RATES) {
      s.phases.push(await runPhase(ctx, ss, rate, writeSec));
      c.phases.push(await runPhase(ctx, hs, rate, writeSec));
    }
    return { s, h: c };
  } finally {
    for (const session of sessions) await closeWatchers(session);
    await hello?.stop();
    await server.stop();
    server.cleanup();
  }
}

function row(subject: string, p: Phase, ratio?: number): Row {
  return {
    scenario: `watch @ ${p.rate} writes/s`,
    subject,
    throughput: p.deliveriesPerSec,
    unit: 'deliveries/s',
    p50Ms: p.p50Ms,
    p99Ms: p.p99Ms,
    ratio,
    cpuUs: p.targetCpuUsPerDelivery,
    mainCpuUs: p.targetMainCpuUsPerDelivery,
    errors: p.writesFailed + Math.max(0, p.expected - p.deliveries),
  };
}

const kb = (b: number): string => `${(b / 1000).toFixed(1)} KB`;
const n = (x: number): string => Math.round(x).toLocaleString('en-US');

function phaseNote(f: Figures, p: Phase): string {
  return (
    `${f.subject} @ ${p.rate}/s: ${n(p.deliveries)} of ${n(p.expected)} deliveries, writer achieved ${n(p.writeRate)} writes/s ` +
    `(PUT latency p50 ${p.putP50Ms.toFixed(1)}, p99 ${p.putP99Ms.toFixed(1)} ms, part of write-to-delivery); ` +
    `CPU (share of one core) target ${pct(p.targetCpuShare)}, watch clients ${pct(p.clientCpuShare)}, writer ${pct(p.writerCpuShare)}; ` +
    `all ${os.cpus().length} CPUs ${pct(p.machineBusy)} busy; target CPU ${p.targetCpuUsPerDelivery.toFixed(2)} µs per delivery (main thread ${p.targetMainCpuUsPerDelivery.toFixed(2)}); ` +
    `${p.streamsEnded} watch streams ended by the target so far`
  );
}

export async function watchScenario(ctx: Ctx): Promise<ScenarioResult> {
  const writeSec = Math.min(ctx.durationSec, MAX_WRITE_SEC);
  const { s, h } = await measureBoth(ctx, writeSec);
  const rows: Row[] = [];
  const notes = [
    `${WATCHERS} watchers on raw loopback sockets in a forked process (bench/watch-clients.ts), starting at the list's resourceVersion (no initial events); ` +
      `writer in the bench process (at most 256 PUTs in flight): PUTs over ${OBJECTS} ConfigMaps of ~${OBJECT_BYTES} B, ${writeSec} s per rate, apiserver and ceiling phases alternating; "errors" = failed writes + undelivered events`,
  ];
  RATES.forEach((_rate, i) => {
    const sp = s.phases[i]!,
      hp = h.phases[i]!;
    rows.push(row(s.subject, sp, sp.deliveriesPerSec / hp.deliveriesPerSec), row(h.subject, hp));
    notes.push(phaseNote(s, sp), phaseNote(h, hp));
  });
  notes.push(
    `idle watcher memory: apiserver ${kb(s.rssPerWatcherBytes)} RSS each, bare uWS ${kb(h.rssPerWatcherBytes)} (VmRSS after opening ${WATCHERS} watchers and 2 s of rest, minus before, divided by ${WATCHERS})`,
  );
  const all = [...s.phases, ...h.phases];
  if (all.some((p) => p.machineBusy > 0.9))
    notes.push(
      'all CPUs were (nearly) saturated during some phases: server, watch clients, writer and loopback TCP share this machine, so those figures are bounded by the machine, not by the server alone',
    );
  if (all.some((p) => p.clientCpuShare > 0.85))
    notes.push(
      'the watch client process was near one full core in some phases: the client side is (part of) the bottleneck there, so deliveries/s are lower bounds',
    );
  const top = s.phases[0]!,
    topCeiling = h.phases[0]!;
  const lat = s.phases.find((p) => p.rate === LATENCY_RATE) ?? s.phases[0]!;
  const share = top.deliveriesPerSec / topCeiling.deliveriesPerSec;
  const verdicts: Verdict[] = [
    {
      target: `≥ 90% of the fan-out ceiling's deliveries at ${top.rate} writes/s (issue 24)`,
      measured: `${pct(share)} (${n(top.deliveriesPerSec)} vs ${n(topCeiling.deliveriesPerSec)}/s)`,
      met: share >= 0.9,
    },
    {
      target: `p99 write-to-delivery ≤ 50 ms at ${lat.rate} writes/s × ${WATCHERS} watchers`,
      measured: `${lat.p99Ms.toFixed(1)} ms (${n(lat.writeRate)} writes/s achieved)`,
      met: lat.p99Ms <= 50 && lat.writeRate >= lat.rate * 0.95,
    },
    {
      target: '< 10 KB resident memory per idle watcher',
      measured: kb(s.rssPerWatcherBytes),
      met: s.rssPerWatcherBytes < 10_000,
    },
  ];
  return {
    name: 'watch',
    rows,
    verdicts,
    commands: [
      `# watch (in-process driver, bench/scenarios/watch-drive.ts + bench/watch-clients.ts): GET ${watchPath('<list RV>')} × ${WATCHERS}; PUT ${BASE_PATH}/w-N at ${RATES.join(', then ')}/s for ${writeSec} s each`,
    ],
    notes,
  };
}
