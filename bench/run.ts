/**
 * Two modes. `npm run bench -- compare a/report.json b/report.json` and the load CLI
 * (`bench/load/cli.ts`: any target server, report directory) when a load-only scenario or flag
 * is named (bench/load/args.ts); otherwise the wrk mode below, unchanged:
 *
 * `npm run bench [-- <scenario...>] [--duration 10s] [--connections 64] [--rounds 2] [--wait-quiet 0s] [--cpu-prof DIR] [--shards N] [--pipeline-depth N] [--record]`
 *
 * Runs each scenario (get, list, create, watch, apply, tls, authz, encodings, fairness; all by default) against the real server and
 * its ceiling in the same run (get, list and create alternate the two for --rounds rounds and
 * keep the best of each, since other work on the machine shifts either; --wait-quiet waits up
 * to that long for the machine to be mostly idle before starting), prints a markdown
 * table, and with --record (only then) appends a dated section to docs/benchmarks.md. Every
 * run first prints which mode runs and why. --cpu-prof writes the server's V8
 * profiles to DIR (summarise with dist/bench/profile-summary.js). Loopback only; every load
 * loop is bounded.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { closeAgent } from './lib/http.js';
import { appendToDoc, renderSection, resultsTable, verdictTable, type ScenarioResult } from './lib/report.js';
import { machineTicks, sleep } from './lib/procs.js';
import { WRK } from './lib/wrk.js';
import type { Ctx } from './scenarios/common.js';
import { scenarioNames, wrkRunner } from './scenario-registry.js';
import { isLoadInvocation, LOAD_FLAGS, LOAD_ONLY, TargetError, UsageError } from './load/args.js';
import { loadMain } from './load/cli.js';
import { compareMain } from './load/compare.js';

/** the wrk mode's scenarios, in the order of the one registry (bench/scenario-registry.ts) */
const WRK_SCENARIOS = scenarioNames('wrk');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
const MAX_DURATION_SEC = 120;
const MAX_WAIT_QUIET_SEC = 1800;
const MAX_CONNECTIONS = 1024;
const MAX_ROUNDS = 10;
/** busy share of all CPUs under which the machine counts as quiet for --wait-quiet */
const QUIET_BUSY = 0.15;

interface Args {
  scenarios: string[];
  durationSec: number;
  connections: number;
  rounds: number;
  waitQuietSec: number;
  cpuProfDir?: string;
  shards?: number;
  /** the server's hidden --actor-pipeline-depth (batches in flight per shard), for pairing builds' behaviours */
  pipelineDepth?: number;
  writeDoc: boolean;
}

/** the server's shard actors (--shards, passed to the create and apply scenarios' server) */
const MAX_SHARDS = 16;

const usage = (): string => `Usage:
  npm run bench [-- <scenario...>] [--duration 10s] [--connections 64] [--rounds 2] [--wait-quiet 0s] [--cpu-prof DIR] [--shards N] [--pipeline-depth N] [--record]
      wrk ceiling mode: the real server against a bare uWebSockets.js/LMDB ceiling on loopback (wrk required).
      scenarios: ${WRK_SCENARIOS.join(', ')} (all by default). --record appends the results to docs/benchmarks.md
      (without it nothing is written there).
  npm run bench -- <get|list|create|update|apply|watch-fanout|informers|density|mixed|all> [--server URL] [--kubeconfig F]
                   [--duration 60s] [--concurrency N] [--qps N] [--out DIR] ...
      load CLI mode: chosen when a load-only scenario or any load flag is named; any target server, SLO report
      (report.json, report.md, SVG charts) under --out.
  npm run bench -- compare a/report.json b/report.json
  npm run bench -- --help
See docs/benchmarks.md.
`;

function parseSeconds(flag: string, v: string, min: number, max: number): number {
  const m = /^([0-9]+)(s|m)?$/.exec(v);
  if (!m) throw new UsageError(`${flag} must look like 10s, 1m or 10, got "${v}"`);
  const sec = Number(m[1]) * (m[2] === 'm' ? 60 : 1);
  if (sec < min || sec > max) throw new UsageError(`${flag} must be between ${min}s and ${max}s`);
  return sec;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { scenarios: [], durationSec: 10, connections: 64, rounds: 2, waitQuietSec: 0, writeDoc: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--duration') a.durationSec = parseSeconds(flag, value(), 1, MAX_DURATION_SEC);
    else if (flag === '--connections') {
      a.connections = Number(value());
      if (!Number.isInteger(a.connections) || a.connections < 1 || a.connections > MAX_CONNECTIONS)
        throw new UsageError(`--connections must be an integer in 1..${MAX_CONNECTIONS}`);
    } else if (flag === '--rounds') {
      a.rounds = Number(value());
      if (!Number.isInteger(a.rounds) || a.rounds < 1 || a.rounds > MAX_ROUNDS)
        throw new UsageError(`--rounds must be an integer in 1..${MAX_ROUNDS}`);
    } else if (flag === '--wait-quiet') a.waitQuietSec = parseSeconds(flag, value(), 0, MAX_WAIT_QUIET_SEC);
    else if (flag === '--cpu-prof') a.cpuProfDir = value();
    else if (flag === '--shards') {
      a.shards = Number(value());
      if (!Number.isInteger(a.shards) || a.shards < 1 || a.shards > MAX_SHARDS)
        throw new UsageError(`--shards must be an integer in 1..${MAX_SHARDS}`);
    } else if (flag === '--pipeline-depth') {
      a.pipelineDepth = Number(value());
      if (!Number.isInteger(a.pipelineDepth) || a.pipelineDepth < 1 || a.pipelineDepth > MAX_SHARDS)
        throw new UsageError(`--pipeline-depth must be an integer in 1..${MAX_SHARDS}`);
    } else if (flag === '--record') a.writeDoc = true;
    // the default now; kept so older command lines still run
    else if (flag === '--no-doc') a.writeDoc = false;
    else if (flag.startsWith('--')) throw new UsageError(`unknown flag ${flag} (npm run bench -- --help)`);
    else if (!wrkRunner(flag)) throw new UsageError(`unknown scenario "${flag}" (known: ${WRK_SCENARIOS.join(', ')})`);
    else a.scenarios.push(flag);
  }
  if (a.scenarios.length === 0) a.scenarios = [...WRK_SCENARIOS];
  return a;
}

async function busyOverOneSecond(): Promise<number> {
  const t0 = machineTicks();
  await sleep(1000);
  const t1 = machineTicks();
  return (t1.busy - t0.busy) / Math.max(1, t1.total - t0.total);
}

/** Waits (at most maxSec) for the machine to be mostly idle; returns the last busy share seen. */
async function waitQuiet(maxSec: number): Promise<number> {
  const until = performance.now() + maxSec * 1000;
  let busy = await busyOverOneSecond();
  while (busy > QUIET_BUSY && performance.now() < until) {
    await sleep(4000);
    busy = await busyOverOneSecond();
  }
  return busy;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage());
    return;
  }
  if (argv[0] === 'compare') process.exit(compareMain(argv.slice(1)));
  const mode = benchMode(argv);
  process.stdout.write(`mode: ${mode.text}\n`);
  if (mode.load) process.exit(await loadMain(argv));
  const args = parseArgs(argv);
  if (!existsSync(WRK))
    throw new UsageError(
      `${WRK} not found (Debian package wrk; or run the load CLI: npm run bench -- get --server URL)`,
    );
  const ctx: Ctx = {
    durationSec: args.durationSec,
    connections: args.connections,
    rounds: args.rounds,
    serverNodeArgs: args.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${args.cpuProfDir}`] : [],
    serverArgs: [
      ...(args.shards ? ['--shards', String(args.shards)] : []),
      ...(args.pipelineDepth ? ['--actor-pipeline-depth', String(args.pipelineDepth)] : []),
    ],
    log: (msg) => process.stdout.write(msg + '\n'),
  };
  const backgroundBusy = await waitQuiet(args.waitQuietSec);
  ctx.log(`background: ${(100 * backgroundBusy).toFixed(0)}% of all CPUs busy before the run`);
  const started = new Date();
  const results: ScenarioResult[] = [];
  for (const name of args.scenarios) {
    ctx.log(`== ${name}`);
    results.push(await wrkRunner(name)!(ctx));
  }
  closeAgent();
  ctx.log('\n' + resultsTable(results) + '\n\n' + verdictTable(results) + '\n');
  if (args.writeDoc) {
    appendToDoc(
      DOC,
      renderSection(
        {
          started,
          backgroundBusy,
          durationSec: args.durationSec,
          connections: args.connections,
          rounds: args.rounds,
          argv,
        },
        results,
        ROOT,
      ),
    );
    ctx.log(`appended to ${DOC}`);
  } else ctx.log(`not recorded: docs/benchmarks.md is unchanged (--record appends these results)`);
}

/** Which mode a command line selects, and why (printed first). */
export function benchMode(argv: string[]): { load: boolean; text: string } {
  if (isLoadInvocation(argv)) {
    const why = argv.find((a) => LOAD_FLAGS.has(a.split('=')[0]!) || LOAD_ONLY.has(a));
    return { load: true, text: `load CLI (bench/load/cli.ts), because ${why} is a load-only scenario or flag` };
  }
  return {
    load: false,
    text: 'wrk ceiling mode (bench/run.ts): no load-only scenario or flag given; the server against a bare uWebSockets.js/LMDB ceiling with wrk',
  };
}

// a bad command line is its message alone; an unexpected failure keeps its stack (BENCH_DEBUG=1) or one line
main().catch((e) => {
  const message =
    e instanceof UsageError || !process.env.BENCH_DEBUG
      ? ((e as Error).message ?? String(e))
      : ((e as Error).stack ?? String(e));
  process.stderr.write(`bench: ${message}\n`);
  process.exit(e instanceof UsageError && !(e instanceof TargetError) ? 2 : 1);
});
