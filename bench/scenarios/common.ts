/** What every scenario receives, and the warm-up-then-measure wrk step they share. */
import { cpuSeconds } from '../lib/procs.js';
import { runWrk, type WrkResult, type WrkRun } from '../lib/wrk.js';

export interface Ctx {
  durationSec: number;
  connections: number;
  /** alternating rounds of subject and ceiling; the best of each is kept */
  rounds: number;
  /** extra node flags for the server child (e.g. --cpu-prof) */
  serverNodeArgs: string[];
  /** extra server flags for the write scenarios (create, apply), e.g. --shards 4 */
  serverArgs?: string[];
  log(msg: string): void;
}

export const WARMUP_SEC = 2;

export interface Measured extends WrkResult {
  /** CPU time (all threads) the target process spent per request during the measured run */
  cpuUsPerRequest: number;
  /** the same, main (front) thread only */
  mainCpuUsPerRequest: number;
}

/** A short warm-up run (JIT, connection set-up), then the measured run against process `pid`. */
export async function warmAndMeasure(ctx: Ctx, pid: number, run: WrkRun, warmScriptArgs?: string[]): Promise<Measured> {
  await runWrk({
    ...run,
    durationSec: Math.min(WARMUP_SEC, run.durationSec),
    scriptArgs: warmScriptArgs ?? run.scriptArgs,
  });
  const cpu0 = cpuSeconds(pid);
  const main0 = cpuSeconds(pid, true);
  const w = await runWrk(run);
  const per = (sec: number): number => (sec * 1e6) / Math.max(1, w.requests);
  const r: Measured = {
    ...w,
    cpuUsPerRequest: per(cpuSeconds(pid) - cpu0),
    mainCpuUsPerRequest: per(cpuSeconds(pid, true) - main0),
  };
  ctx.log(
    `  ${r.command}\n    ${r.reqPerSec.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, errors ${r.errors}, ${r.cpuUsPerRequest.toFixed(1)} µs CPU/request (main thread ${r.mainCpuUsPerRequest.toFixed(1)})`,
  );
  return r;
}

/** A DNS-label-safe tag unique to this process run. */
export function runTag(prefix: string): string {
  return `${prefix}${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
}

/**
 * Runs every step once per round, in order, so the subject and its ceilings alternate and
 * share whatever else the machine is doing; keeps each step's best result (highest score).
 */
export async function bestOf<K extends string, T>(
  rounds: number,
  steps: Record<K, (round: number) => Promise<T>>,
  score: (r: T) => number,
): Promise<Record<K, T>> {
  const best = {} as Record<K, T>;
  for (let round = 0; round < rounds; round++) {
    for (const k of Object.keys(steps) as K[]) {
      const r = await steps[k](round);
      if (best[k] === undefined || score(r) > score(best[k])) best[k] = r;
    }
  }
  return best;
}
