/**
 * Two modes. `npm run bench -- compare a/report.json b/report.json` and the load CLI
 * (`bench/load/cli.ts`: any target server, report directory) when a load-only scenario or flag
 * is named (bench/load/args.ts); otherwise the wrk mode below, unchanged:
 *
 * `npm run bench [-- <scenario...>] [--duration 10s] [--connections 64] [--rounds 2] [--wait-quiet 0s] [--cpu-prof DIR] [--no-doc]`
 *
 * Runs each scenario (get, list, create, watch, apply, tls, authz, encodings, fairness; all by default) against the real server and
 * its ceiling in the same run (get, list and create alternate the two for --rounds rounds and
 * keep the best of each, since other work on the machine shifts either; --wait-quiet waits up
 * to that long for the machine to be mostly idle before starting), prints a markdown
 * table and appends a dated section to docs/benchmarks.md. --cpu-prof writes the server's V8
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
import { createScenario } from './scenarios/create.js';
import { getScenario, listScenario } from './scenarios/read.js';
import { watchScenario } from './scenarios/watch.js';
import { applyScenario } from './scenarios/apply.js';
import { tlsScenario } from './scenarios/tls.js';
import { authzScenario } from './scenarios/authz.js';
import { encodingsScenario } from './scenarios/encodings.js';
import { fairnessScenario } from './scenarios/fairness.js';
import { isLoadInvocation, UsageError } from './load/args.js';
import { loadMain } from './load/cli.js';
import { compareMain } from './load/compare.js';

const SCENARIOS: Record<string, (ctx: Ctx) => Promise<ScenarioResult>> = {
  get: getScenario,
  list: listScenario,
  create: createScenario,
  watch: watchScenario,
  apply: applyScenario,
  tls: tlsScenario,
  authz: authzScenario,
  encodings: encodingsScenario,
  fairness: fairnessScenario,
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
const MAX_DURATION_SEC = 120;
const MAX_WAIT_QUIET_SEC = 1800;
const MAX_CONNECTIONS = 1024;
const MAX_ROUNDS = 10;
/** busy share of all CPUs under which the machine counts as quiet for --wait-quiet */
const QUIET_BUSY = 0.15;

interface Args { scenarios: string[]; durationSec: number; connections: number; rounds: number; waitQuietSec: number; cpuProfDir?: string; writeDoc: boolean }

function parseSeconds(flag: string, v: string, min: number, max: number): number {
  const m = /^([0-9]+)(s|m)?$/.exec(v);
  if (!m) throw new Error(`${flag} must look like 10s, 1m or 10, got "${v}"`);
  const sec = Number(m[1]) * (m[2] === 'm' ? 60 : 1);
  if (sec < min || sec > max) throw new Error(`${flag} must be between ${min}s and ${max}s`);
  return sec;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { scenarios: [], durationSec: 10, connections: 64, rounds: 2, waitQuietSec: 0, writeDoc: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--duration') a.durationSec = parseSeconds(flag, value(), 1, MAX_DURATION_SEC);
    else if (flag === '--connections') {
      a.connections = Number(value());
      if (!Number.isInteger(a.connections) || a.connections < 1 || a.connections > MAX_CONNECTIONS) throw new Error(`--connections must be an integer in 1..${MAX_CONNECTIONS}`);
    } else if (flag === '--rounds') {
      a.rounds = Number(value());
      if (!Number.isInteger(a.rounds) || a.rounds < 1 || a.rounds > MAX_ROUNDS) throw new Error(`--rounds must be an integer in 1..${MAX_ROUNDS}`);
    } else if (flag === '--wait-quiet') a.waitQuietSec = parseSeconds(flag, value(), 0, MAX_WAIT_QUIET_SEC);
    else if (flag === '--cpu-prof') a.cpuProfDir = value();
    else if (flag === '--no-doc') a.writeDoc = false;
    else if (flag.startsWith('--')) throw new Error(`unknown flag ${flag}`);
    else if (!SCENARIOS[flag]) throw new Error(`unknown scenario "${flag}" (known: ${Object.keys(SCENARIOS).join(', ')})`);
    else a.scenarios.push(flag);
  }
  if (a.scenarios.length === 0) a.scenarios = Object.keys(SCENARIOS);
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
  if (argv[0] === 'compare') process.exit(compareMain(argv.slice(1)));
  if (isLoadInvocation(argv)) process.exit(await loadMain(argv));
  const args = parseArgs(argv);
  if (!existsSync(WRK)) throw new Error(`${WRK} not found (Debian package wrk)`);
  const ctx: Ctx = {
    durationSec: args.durationSec,
    connections: args.connections,
    rounds: args.rounds,
    serverNodeArgs: args.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${args.cpuProfDir}`] : [],
    log: (msg) => process.stdout.write(msg + '\n'),
  };
  const backgroundBusy = await waitQuiet(args.waitQuietSec);
  ctx.log(`background: ${(100 * backgroundBusy).toFixed(0)}% of all CPUs busy before the run`);
  const started = new Date();
  const results: ScenarioResult[] = [];
  for (const name of args.scenarios) {
    ctx.log(`== ${name}`);
    results.push(await SCENARIOS[name]!(ctx));
  }
  closeAgent();
  ctx.log('\n' + resultsTable(results) + '\n\n' + verdictTable(results) + '\n');
  if (args.writeDoc) {
    appendToDoc(DOC, renderSection({ started, backgroundBusy, durationSec: args.durationSec, connections: args.connections, rounds: args.rounds, argv }, results, ROOT));
    ctx.log(`appended to ${DOC}`);
  }
}

main().catch((e) => {
  process.stderr.write(e instanceof UsageError ? `bench: ${e.message}\n` : `bench: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
