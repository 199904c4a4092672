/**
 * Scaling table (issue 24): `node dist/bench/scaling.js [--sizes 1000,100000] [--duration 3s] [--record]`
 *
 * For each store size N: a fresh server, N small ConfigMaps created over HTTP (bounded
 * concurrency; the fill is not what is measured), then with wrk on loopback, each after the
 * harness's warm-up: GET of one object (-c32), LIST of one namespace holding 500 items (-c16),
 * and the first and second `limit=500` pages of the cluster-scope (all-namespaces) ConfigMap
 * collection (-c16). CPU comes from /proc/<server pid>/stat (all threads, and the front thread);
 * list cost is divided by the items per response. RSS is the server's after the fill and at the
 * end. Flat columns as N grows mean GET and LIST cost does not depend on the store's size.
 * `--record` appends the table to docs/benchmarks.md (without it nothing is written there).
 */
import { fileURLToPath } from 'node:url';
import { appendToDoc, machineInfo } from './lib/report.js';
import { cpuSeconds, rssBytes, sleep, startServer, type ServerChild } from './lib/procs.js';
import { closeAgent, ensureNamespace, expect, parallel } from './lib/http.js';
import { WARMUP_SEC, warmAndMeasure, type Ctx, type Measured } from './scenarios/common.js';
import { UsageError } from './load/args.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
/** items per namespace list and per page */
const PAGE = 500;
/** objects per namespace for the rest of the store */
const PER_NS = 1000;
const FILL_CONCURRENCY = 64;
const MAX_SIZE = 2_000_000;
const VALUE_BYTES = 200;
const LIST_NS = 'scale-list';
/** fewer wrk completions than this and the figure comes from a bounded sequential loop instead */
const MIN_WRK_REQUESTS = 20;
const SEQ_MAX_REQUESTS = 20;
const SEQ_MAX_MS = 30_000;
const SETTLE_MAX_MS = 60_000;

interface Args {
  sizes: number[];
  durationSec: number;
  record: boolean;
}

export function parseArgs(argv: string[]): Args {
  const a: Args = { sizes: [1000, 100_000], durationSec: 3, record: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--sizes') {
      a.sizes = value()
        .split(',')
        .map((s) => Number(s.replace(/_/g, '')));
      if (a.sizes.some((n) => !Number.isInteger(n) || n < 2 * PAGE || n > MAX_SIZE))
        throw new UsageError(`--sizes takes integers in ${2 * PAGE}..${MAX_SIZE} (two full pages), comma-separated`);
    } else if (flag === '--duration') {
      const m = /^([0-9]+)s?$/.exec(value());
      a.durationSec = m ? Number(m[1]) : NaN;
      if (!(a.durationSec >= 1 && a.durationSec <= 60)) throw new UsageError('--duration must be 1s..60s');
    } else if (flag === '--record') a.record = true;
    else
      throw new UsageError(
        `unknown argument ${flag} (usage: node dist/bench/scaling.js [--sizes 1000,100000] [--duration 3s] [--record])`,
      );
  }
  return a;
}

export interface SizeResult {
  n: number;
  fillSec: number;
  rssFill: number;
  rssEnd: number;
  get: Measured;
  nsList: Measured;
  firstPage: Measured;
  nextPage: Measured;
}

/** Namespace and name of object i: the first PAGE in LIST_NS, the rest PER_NS to a namespace. */
function placement(i: number): { ns: string; name: string } {
  const name = `cm-${String(i).padStart(7, '0')}`;
  return i < PAGE ? { ns: LIST_NS, name } : { ns: `scale-${Math.floor((i - PAGE) / PER_NS)}`, name };
}

async function fill(ctx: Ctx, base: string, n: number): Promise<number> {
  const t0 = performance.now();
  const namespaces = 1 + Math.ceil((n - PAGE) / PER_NS);
  await parallel(namespaces, 16, (k) => ensureNamespace(base, k === 0 ? LIST_NS : `scale-${k - 1}`));
  const value = 'x'.repeat(VALUE_BYTES);
  let done = 0;
  await parallel(n, FILL_CONCURRENCY, async (i) => {
    const { ns, name } = placement(i);
    await expect(
      base,
      'POST',
      `/api/v1/namespaces/${ns}/configmaps`,
      `{"metadata":{"name":"${name}","labels":{"bench":"scale"}},"data":{"k":"${value}"}}`,
      [201],
    );
    if (++done % Math.max(1, Math.floor(n / 10)) === 0)
      ctx.log(`  filled ${done}/${n} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  });
  return (performance.now() - t0) / 1000;
}

/**
 * Waits (at most SETTLE_MAX_MS) until the server uses under 10% of a CPU, so that neither the
 * fill's tail (GC, commits) nor requests an earlier wrk left in flight land in a measurement.
 */
async function settle(pid: number): Promise<void> {
  const t0 = performance.now();
  let last = cpuSeconds(pid);
  while (performance.now() - t0 < SETTLE_MAX_MS) {
    await sleep(500);
    const now = cpuSeconds(pid);
    if (now - last < 0.05) return;
    last = now;
  }
}

/**
 * One request at a time (at most SEQ_MAX_REQUESTS or SEQ_MAX_MS): for responses so slow that
 * wrk completes too few in its window to give a figure. Marked `seq` in the table.
 */
async function sequential(ctx: Ctx, server: ServerChild, path: string): Promise<Measured> {
  await settle(server.pid);
  const cpu0 = cpuSeconds(server.pid);
  const main0 = cpuSeconds(server.pid, true);
  const t0 = performance.now();
  const lat: number[] = [];
  while (lat.length < SEQ_MAX_REQUESTS && performance.now() - t0 < SEQ_MAX_MS) {
    const s = performance.now();
    await expect(server.url, 'GET', path, undefined, [200], undefined);
    lat.push(performance.now() - s);
  }
  const sec = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const per = (cpu: number): number => (cpu * 1e6) / lat.length;
  const r: Measured = {
    command: `# sequential: ${lat.length} × GET ${path}`,
    requests: lat.length,
    reqPerSec: lat.length / sec,
    errors: 0,
    raw: '',
    p50Ms: lat[Math.floor(lat.length / 2)]!,
    p99Ms: lat[lat.length - 1]!,
    cpuUsPerRequest: per(cpuSeconds(server.pid) - cpu0),
    mainCpuUsPerRequest: per(cpuSeconds(server.pid, true) - main0),
  };
  ctx.log(
    `  ${r.command}\n    ${r.reqPerSec.toFixed(1)} req/s, p50 ${r.p50Ms.toFixed(0)} ms, max ${r.p99Ms.toFixed(0)} ms, ${r.cpuUsPerRequest.toFixed(0)} µs CPU/request (main thread ${r.mainCpuUsPerRequest.toFixed(0)})`,
  );
  return r;
}

/** Items in a list response, and its continue token. */
async function listShape(base: string, path: string): Promise<{ items: number; next: string }> {
  const body = JSON.parse((await expect(base, 'GET', path, undefined, [200])).text) as {
    items?: unknown[];
    metadata?: { continue?: string };
  };
  return { items: body.items?.length ?? 0, next: body.metadata?.continue ?? '' };
}

async function measureSize(ctx: Ctx, n: number): Promise<SizeResult> {
  ctx.log(`== ${n.toLocaleString('en-US')} objects`);
  const server: ServerChild = await startServer(
    ['--max-old-space-size=8192'],
    ['--max-requests-inflight', '2000', '--max-mutating-requests-inflight', '1000'],
  );
  try {
    const fillSec = await fill(ctx, server.url, n);
    const rssFill = rssBytes(server.pid);
    ctx.log(
      `  fill: ${fillSec.toFixed(1)} s (${(n / fillSec).toFixed(0)} creates/s), RSS ${(rssFill / 2 ** 20).toFixed(0)} MiB`,
    );
    const nsPath = `/api/v1/namespaces/${LIST_NS}/configmaps`;
    const pagePath = `/api/v1/configmaps?limit=${PAGE}`;
    const first = await listShape(server.url, pagePath);
    const ns = await listShape(server.url, nsPath);
    if (ns.items !== PAGE || first.items !== PAGE || !first.next)
      throw new Error(`expected ${PAGE} items per list and a continue token, got ${ns.items} and ${first.items}`);
    const nextPath = `${pagePath}&continue=${encodeURIComponent(first.next)}`;
    if ((await listShape(server.url, nextPath)).items !== PAGE)
      throw new Error('the second page does not hold a full page');
    const wrk = async (path: string, connections: number): Promise<Measured> => {
      await settle(server.pid);
      const w = await warmAndMeasure(ctx, server.pid, {
        url: server.url + path,
        threads: 1,
        connections,
        durationSec: ctx.durationSec,
      });
      return w.requests >= MIN_WRK_REQUESTS ? w : sequential(ctx, server, path);
    };
    const get = await wrk(`/api/v1/namespaces/${LIST_NS}/configmaps/${placement(0).name}`, 32);
    const nsList = await wrk(nsPath, 16);
    const firstPage = await wrk(pagePath, 16);
    const nextPage = await wrk(nextPath, 16);
    return { n, fillSec, rssFill, rssEnd: rssBytes(server.pid), get, nsList, firstPage, nextPage };
  } finally {
    await server.stop();
    server.cleanup();
  }
}

const int = (v: number): string => (v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US'));
const seq = (m: Measured): string => (m.command.startsWith('# sequential') ? ' seq' : '');
const mib = (b: number): string => int(b / 2 ** 20);
const perItem = (m: Measured): string =>
  `${(m.cpuUsPerRequest / PAGE).toFixed(2)} (${(m.mainCpuUsPerRequest / PAGE).toFixed(2)})`;
const errs = (r: SizeResult): number => r.get.errors + r.nsList.errors + r.firstPage.errors + r.nextPage.errors;

export function scalingTable(results: SizeResult[]): string {
  const lines = [
    `| objects stored | fill (creates/s) | RSS after fill (MiB) | GET req/s | GET µs CPU/req (front) | ns LIST of ${PAGE} req/s | µs CPU/item (front) | cluster page 1 req/s | µs CPU/item (front) | cluster page 2 req/s | µs CPU/item (front) | RSS at end (MiB) | errors |`,
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    lines.push(
      `| ${int(r.n)} | ${int(r.n / r.fillSec)} | ${mib(r.rssFill)} | ${int(r.get.reqPerSec)} | ${r.get.cpuUsPerRequest.toFixed(1)} (${r.get.mainCpuUsPerRequest.toFixed(1)}) | ${int(r.nsList.reqPerSec)}${seq(r.nsList)} | ${perItem(r.nsList)} | ${int(r.firstPage.reqPerSec)}${seq(r.firstPage)} | ${perItem(r.firstPage)} | ${int(r.nextPage.reqPerSec)}${seq(r.nextPage)} | ${perItem(r.nextPage)} | ${mib(r.rssEnd)} | ${errs(r)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  const ctx: Ctx = {
    durationSec: args.durationSec,
    connections: 32,
    rounds: 1,
    serverNodeArgs: [],
    log: (m) => process.stdout.write(m + '\n'),
  };
  const started = new Date();
  const results: SizeResult[] = [];
  for (const n of args.sizes) results.push(await measureSize(ctx, n));
  closeAgent();
  const table = scalingTable(results);
  ctx.log('\n' + table + '\n');
  if (!args.record) {
    ctx.log('not recorded: docs/benchmarks.md is unchanged (--record appends this table)');
    return;
  }
  const info = { started, backgroundBusy: 0, durationSec: args.durationSec, connections: 32, rounds: 1, argv };
  const section = [
    `## Scaling table: run of ${started.toISOString().replace(/\.\d+Z$/, 'Z')}`,
    '',
    ...machineInfo(info, ROOT).filter((l) => !l.startsWith('- Background')),
    `- Command: \`node dist/bench/scaling.js ${argv.join(' ')}\` (wrk ${args.durationSec} s per figure after a ${Math.min(WARMUP_SEC, args.durationSec)} s warm-up; ConfigMaps with a ${VALUE_BYTES}-byte value, ${PER_NS} per namespace, ${PAGE} in \`${LIST_NS}\`)`,
    '',
    table,
    '',
  ].join('\n');
  appendToDoc(DOC, section);
  ctx.log(`appended to ${DOC}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`scaling: ${(e as Error).message ?? String(e)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  });
}
