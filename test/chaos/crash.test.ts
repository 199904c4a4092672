/**
 * Bounded crash-consistency run for `npm test`: 5 kill -9 / restart trials on one data
 * directory, with a fixed seed so every run of the suite is the same run. The environment
 * may only widen it: CHAOS_TRIALS=<n> above 5 adds trials, CHAOS_SEED=<n> (or `random`)
 * explores other kill moments and write choices. Every configured trial must run: a run cut
 * short fails. Long runs: `npm run chaos -- --trials 100`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from './harness.js';

const FIXED_SEED = 2_025_112_601;
const DEFAULT_TRIALS = 5;
const SEED =
  process.env.CHAOS_SEED === 'random'
    ? (Date.now() ^ (process.pid << 16)) >>> 0
    : process.env.CHAOS_SEED
      ? Number(process.env.CHAOS_SEED) >>> 0
      : FIXED_SEED;
// a knob below the default is ignored: the environment never weakens the suite
const TRIALS = Math.max(DEFAULT_TRIALS, Number(process.env.CHAOS_TRIALS ?? 0) || 0);

test(`crash consistency: ${TRIALS} kill -9 trials, seed ${SEED}`, { timeout: 60_000 + TRIALS * 30_000 }, async (t) => {
  const report = await runChaos({ seed: SEED, trials: TRIALS, log: (l) => t.diagnostic(l) });
  t.diagnostic(
    `seed ${SEED}: ${report.trials} trials in ${report.durationMs} ms; acknowledged ${JSON.stringify(report.acknowledged)}; ` +
      `${report.inFlightAtKill} writes in flight at the kills, ${report.inFlightApplied} of them found applied; resumes ${JSON.stringify(report.resumes)}`,
  );
  for (const p of report.problems.slice(0, 30)) t.diagnostic(p);
  assert.equal(report.trials, TRIALS, 'every configured trial ran');
  assert.ok(report.acknowledged.creates > 0, 'writes were acknowledged');
  assert.deepEqual(report.lost, [], 'no acknowledged write was lost');
  assert.deepEqual(report.problems, [], `no consistency problems (reproduce with CHAOS_SEED=${SEED})`);
});
