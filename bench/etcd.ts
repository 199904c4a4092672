/**
 * `node dist/bench/etcd.js [--creates 3000] [--get-seconds 5] [--rounds 1] [--creates-only [--with-lmdb]] [--backend-commits] [--cpu-prof DIR] [-- <server flags>]`
 *
 * etcd against LMDB, one API server against two, in one run on this machine, beside raw etcd
 * throughput measured on the same etcd:
 * - raw etcd: 1 KB puts and single-key ranges (linearizable) from 32 concurrent etcd3 calls;
 * - durable creates/s of 1 KB ConfigMaps, 32 clients (with two servers, clients alternate);
 * - GET req/s of one ConfigMap by name with wrk (-c32 per server; with two servers one wrk per
 *   server, run at the same time, summed).
 * etcd is Debian's single member on free loopback ports, data under a temp dir, removed after.
 * --creates-only: raw etcd puts and one etcd-backed server's creates, alternated for --rounds
 * rounds on the same etcd (a loaded machine drifts: each figure is the median of its rounds,
 * and the ratio is taken per round, then its median), with the CPU each phase cost per write:
 * etcd's, the server's (all threads) and this process's (the etcd3 or HTTP client); per round
 * also the ratio the CPU per write alone predicts and what other processes took meanwhile.
 * --backend-commits: the etcd backend alone in this process, --creates creates per round in
 * batches of 13 (bench/lib/etcd-commits.ts): its CPU per create.
 */
import { Etcd3 } from 'etcd3';
import { threadCpuTicks } from '../src/metrics/process-metrics.js';
import { cpuSeconds, machineTicks, sleep, startServer, type ServerChild } from './lib/procs.js';
import { startEtcd } from './lib/etcd-proc.js';
import { backendCommits } from './lib/etcd-commits.js';
import { configMapJson, ensureNamespace, expect, parallel, closeAgent } from './lib/http.js';
import { runWrk } from './lib/wrk.js';

const CLIENTS = 32;
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CREATES = arg('creates', 3000);
const GET_SECONDS = arg('get-seconds', 5);
const ROUNDS = arg('rounds', 1);
const CREATES_ONLY = process.argv.includes('--creates-only');
/** --backend-commits: the etcd backend alone, in this process (bench/lib/etcd-commits.ts) */
const BACKEND_COMMITS = process.argv.includes('--backend-commits');
/**
 * --creates-only --with-lmdb: each round also runs the same creates against an LMDB-backed
 * server (same flags, same client, same rate range): the server's CPU per create without etcd,
 * what an etcd client at no cost would leave
 */
const WITH_LMDB = process.argv.includes('--with-lmdb');
/** --creates-only: the etcd-backed server writes V8 CPU profiles (every thread) into DIR */
const CPU_PROF = process.argv.includes('--cpu-prof') ? process.argv[process.argv.indexOf('--cpu-prof') + 1] : undefined;
/** flags after `--` go to the etcd-backed server of --creates-only (e.g. --shards 2) */
const SERVER_ARGS = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : [];

/** latencies (ms) of the requests of the last timed() run that recorded them */
let latencies: number[] = [];

async function timed(n: number, fn: (i: number) => Promise<void>, record = false): Promise<number> {
  latencies = [];
  const t0 = performance.now();
  await parallel(n, CLIENTS, async (i) => {
    const t = performance.now();
    await fn(i);
    if (record) latencies.push(performance.now() - t);
  });
  return n / ((performance.now() - t0) / 1000);
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

async function rawEtcd(
  url: string,
  prefix = '/raw',
  ranges = true,
): Promise<{ put: number; range: number; p50: number }> {
  const c = new Etcd3({ hosts: url });
  const value = 'x'.repeat(1024);
  const put = await timed(
    CREATES,
    async (i) => {
      await c.put(`${prefix}/k${i}`).value(value);
    },
    true,
  );
  const p50 = quantile(latencies, 0.5);
  const range = ranges
    ? await timed(CREATES * 2, async (i) => {
        await c.get(`${prefix}/k${i % CREATES}`).string();
      })
    : 0;
  c.close();
  return { put, range, p50 };
}

async function creates(servers: ServerChild[], ns: string): Promise<number> {
  return timed(
    CREATES,
    async (i) => {
      await expect(
        servers[i % servers.length]!.url,
        'POST',
        `/api/v1/namespaces/${ns}/configmaps`,
        configMapJson(`c-${i}`, 1024),
        [201],
      );
    },
    true,
  );
}

async function gets(
  servers: ServerChild[],
  ns: string,
): Promise<{ reqPerSec: number; p99: number; errors: number; command: string }> {
  const runs = await Promise.all(
    servers.map((s) =>
      runWrk({
        url: `${s.url}/api/v1/namespaces/${ns}/configmaps/c-1`,
        threads: 1,
        connections: CLIENTS,
        durationSec: GET_SECONDS,
      }),
    ),
  );
  return {
    reqPerSec: runs.reduce((a, r) => a + r.reqPerSec, 0),
    p99: Math.max(...runs.map((r) => r.p99Ms)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    command: runs[0]!.command,
  };
}

async function scenario(name: string, count: number, args: string[]): Promise<string> {
  const servers: ServerChild[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startServer([], args));
    const ns = `bench-${name.replace(/\W+/g, '-')}`;
    await ensureNamespace(servers[0]!.url, ns);
    // the namespace reaches the other server through its etcd watch
    for (const s of servers.slice(1)) {
      const deadline = Date.now() + 10_000;
      while ((await fetch(`${s.url}/api/v1/namespaces/${ns}`)).status !== 200 && Date.now() < deadline) await sleep(20);
    }
    const c = await creates(servers, ns);
    const g = await gets(servers, ns);
    return `| ${name} | ${c.toFixed(0)} | ${g.reqPerSec.toFixed(0)} | ${g.p99.toFixed(1)} | ${g.errors} |`;
  } finally {
    for (const s of servers) {
      await s.stop();
      s.cleanup();
    }
    closeAgent();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * CPU µs per op of each process while fn runs n ops (etcd, the server, this process), and the
 * server's per thread: its main (front) thread, its busiest other thread (with one shard: the
 * shard actor's JavaScript thread; Node names every thread `node`, so it is told by its CPU)
 * and all the rest (V8's GC helpers, libuv's pool).
 */
async function perOp<T>(
  n: number,
  pids: { etcd: number; server?: number },
  fn: () => Promise<T>,
): Promise<{ out: T; etcd: number; server: number; client: number; threads: string; others: number; idle: number }> {
  const m0 = machineTicks();
  const w0 = performance.now();
  const e0 = cpuSeconds(pids.etcd);
  const s0 = pids.server ? cpuSeconds(pids.server) : 0;
  const t0 = pids.server ? threadSeconds(pids.server) : new Map<string, number>();
  const c0 = process.cpuUsage();
  const out = await fn();
  const c = process.cpuUsage(c0);
  const us = (sec: number): number => (sec * 1e6) / n;
  let threads = '';
  if (pids.server) {
    const deltas = [...threadSeconds(pids.server)].map(([tid, sec]) => [tid, sec - (t0.get(tid) ?? 0)] as const);
    const front = deltas.find(([tid]) => tid === String(pids.server))?.[1] ?? 0;
    const others = deltas
      .filter(([tid]) => tid !== String(pids.server))
      .map(([, d]) => d)
      .sort((a, b) => b - a);
    const rest = others.slice(1).reduce((a, b) => a + b, 0);
    threads = `front ${us(front).toFixed(0)}, busiest other ${us(others[0] ?? 0).toFixed(0)}, rest ${us(rest).toFixed(0)}`;
  }
  const etcd = cpuSeconds(pids.etcd) - e0;
  const server = pids.server ? cpuSeconds(pids.server) - s0 : 0;
  const client = (c.user + c.system) / 1e6;
  // the machine over the phase: what other processes (the other sessions) took, in cores, and
  // how much of both CPUs stayed idle (a phase that found no idle CPU was CPU-bound)
  const m = machineTicks();
  const wall = (performance.now() - w0) / 1000;
  const busy = (m.busy - m0.busy) / 100;
  return {
    out,
    etcd: us(etcd),
    server: us(server),
    client: us(client),
    threads,
    others: Math.max(0, busy - etcd - server - client) / wall,
    idle: 1 - (m.busy - m0.busy) / Math.max(1, m.total - m0.total),
  };
}

/** CPU seconds of each thread of a process (by thread id) */
function threadSeconds(pid: number): Map<string, number> {
  return new Map([...threadCpuTicks(pid)].map(([tid, ticks]) => [tid, ticks / 100]));
}

/**
 * etcd's write requests (raft proposals committed, etcd_server_proposals_committed_total of its
 * /metrics: one per Txn or put), to tell creates per Txn. (etcd_mvcc_txn_total, used before,
 * counts etcd's internal read transactions too: about two per write Txn, half the creates per Txn.)
 */
async function etcdTxns(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^etcd_server_proposals_committed_total (\S+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

/** Raw etcd puts against one etcd-backed server's durable creates, round by round. */
async function createsOnly(url: string, etcdPid: number): Promise<void> {
  const raw: number[] = [],
    srv: number[] = [],
    ratio: number[] = [];
  const server = await startServer(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : [], [
    '--storage-backend',
    'etcd3',
    '--etcd-servers',
    url,
    '--etcd-prefix',
    '/bench-c',
    ...SERVER_ARGS,
  ]);
  const lmdb = WITH_LMDB ? await startServer([], SERVER_ARGS) : undefined;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const ns = `bench-c-${r}`;
      await ensureNamespace(server.url, ns);
      if (lmdb) await ensureNamespace(lmdb.url, ns);
      const rawRun = await perOp(CREATES, { etcd: etcdPid }, () => rawEtcd(url, `/raw${r}`, false));
      const txns0 = await etcdTxns(url);
      const srvRun = await perOp(CREATES, { etcd: etcdPid, server: server.pid }, () => creates([server], ns));
      const perTxn = CREATES / ((await etcdTxns(url)) - txns0);
      const [p, c] = [rawRun.out.put, srvRun.out];
      raw.push(p);
      srv.push(c);
      ratio.push(c / p);
      const f = (x: number): string => x.toFixed(0);
      console.log(
        `round ${r + 1}: raw etcd ${f(p)} puts/s, etcd server ${f(c)} creates/s (${f((100 * c) / p)}%); ` +
          `CPU µs per put: etcd ${f(rawRun.etcd)}, client ${f(rawRun.client)}, put latency p50 ${rawRun.out.p50.toFixed(1)} ms; ` +
          `per create: etcd ${f(srvRun.etcd)}, server ${f(srvRun.server)} (${srvRun.threads}), client ${f(srvRun.client)}; ` +
          `${perTxn.toFixed(1)} creates per etcd Txn; create latency p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms`,
      );
      // what the ratio would be if both phases were bound by this machine's CPU alone (CPU per
      // write of the raw phase over that of the server phase), and the competition each phase met
      const cpuRatio = (rawRun.etcd + rawRun.client) / (srvRun.etcd + srvRun.server + srvRun.client);
      console.log(
        `  round ${r + 1}: CPU-bound ratio ${f(100 * cpuRatio)}%; other processes ${rawRun.others.toFixed(2)} cores during the raw puts ` +
          `(idle ${f(100 * rawRun.idle)}%), ${srvRun.others.toFixed(2)} during the creates (idle ${f(100 * srvRun.idle)}%)`,
      );
      if (lmdb) {
        const l = await perOp(CREATES, { etcd: etcdPid, server: lmdb.pid }, () => creates([lmdb], ns));
        console.log(
          `  same round on LMDB: ${f(l.out)} creates/s; CPU µs per create: server ${f(l.server)}, client ${f(l.client)}`,
        );
      }
    }
  } finally {
    for (const s of lmdb ? [server, lmdb] : [server]) {
      await s.stop();
      s.cleanup();
    }
    closeAgent();
  }
  console.log(
    `median of ${ROUNDS} rounds (${CREATES} each, ${CLIENTS} clients${SERVER_ARGS.length ? `, server ${SERVER_ARGS.join(' ')}` : ''}): raw etcd ${median(raw).toFixed(0)} puts/s, etcd server ${median(srv).toFixed(0)} creates/s, ratio ${(100 * median(ratio)).toFixed(0)}%`,
  );
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  if (BACKEND_COMMITS) {
    try {
      const rounds = await backendCommits(etcd.url, ROUNDS, Math.ceil(CREATES / 13));
      const line = rounds.map((r) => `${r.usPerCreate.toFixed(1)} µs (${r.perSecond.toFixed(0)}/s)`).join(', ');
      console.log(`etcd backend alone, CPU per create (batches of 13, 2 in flight, follower on), by round: ${line}`);
    } finally {
      await etcd.stop();
    }
    return;
  }
  if (CREATES_ONLY) {
    try {
      await createsOnly(etcd.url, etcd.pid);
    } finally {
      await etcd.stop();
    }
    return;
  }
  const rows: string[] = [];
  try {
    const raw = await rawEtcd(etcd.url);
    rows.push(await scenario('lmdb, 1 server', 1, []));
    const e = (prefix: string) => ['--storage-backend', 'etcd3', '--etcd-servers', etcd.url, '--etcd-prefix', prefix];
    rows.push(await scenario('etcd, 1 server', 1, e('/bench1')));
    rows.push(await scenario('etcd, 2 servers', 2, e('/bench2')));
    console.log(
      `## etcd benchmark (${new Date().toISOString()}, ${CREATES} creates, GET ${GET_SECONDS}s per run, ${CLIENTS} clients)\n`,
    );
    console.log(
      `raw etcd (same member, etcd3 client, ${CLIENTS} concurrent calls): ${raw.put.toFixed(0)} puts/s (1 KB), ${raw.range.toFixed(0)} ranges/s (one key, linearizable)\n`,
    );
    console.log('| setup | durable creates/s | GET req/s | GET p99 ms | GET errors |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    await etcd.stop();
  }
}

await main();
