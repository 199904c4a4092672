/**
 * Bounded crash-consistency run for `npm test`: a few kill -9 / restart trials on one data
 * directory (seed printed; CHAOS_SEED=<n> reproduces the kill moments and write choices,
 * CHAOS_TRIALS=<n> changes the count). Long runs: `npm run chaos -- --trials 100`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from './harness.js';

const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
const TRIALS = Number(process.env.CHAOS_TRIALS ?? 5);

test(`crash consistency: ${TRIALS} kill -9 trials, seed ${SEED}`, { timeout: 180_000 }, async (t) => {
  const report = await runChaos({ seed: SEED, trials: TRIALS, timeBudgetMs: 40_000, log: (l) => t.diagnostic(l) });
  t.diagnostic(`seed ${SEED}: ${report.trials} trials in ${report.durationMs} ms; acknowledged ${JSON.stringify(report.acknowledged)}; ` +
    `${report.inFlightAtKill} writes in flight at the kills, ${report.inFlightApplied} of them found applied; resumes ${JSON.stringify(report.resumes)}`);
  for (const p of report.problems.slice(0, 30)) t.diagnostic(p);
  assert.ok(report.trials >= 1, 'at least one trial ran');
  assert.ok(report.acknowledged.creates > 0, 'writes were acknowledged');
  assert.deepEqual(report.lost, [], 'no acknowledged write was lost');
  assert.deepEqual(report.problems, [], `no consistency problems (reproduce with CHAOS_SEED=${SEED})`);
});
