/**
 * Bounded fuzz run for `npm test`: a few thousand generated requests against a real server
 * (seed printed; FUZZ_SEED=<n> reproduces a run, FUZZ_REQUESTS=<n> changes its size). Fails
 * on any crash, undocumented 5xx, non-Status error, undecodable body, hang, half-written
 * object, or stored object that is unreadable or invalid at the end (FUZZ_ALLOW=<kind,...> tolerates
 * named finding kinds while their server bugs are open).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { runFuzz } from './runner.js';

// npm test replays a fixed seed so CI is repeatable; FUZZ_SEED=random (or `npm run fuzz`) explores
const FIXED_SEED = 1219950693;
const SEED = process.env.FUZZ_SEED === 'random' ? (Date.now() ^ (process.pid << 16)) >>> 0
  : process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) >>> 0 : FIXED_SEED;
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 4000);
const TIME_BUDGET_MS = 35_000;
/** finding kinds reported but tolerated while a known server bug is open, e.g. FUZZ_ALLOW=head-with-body */
const ALLOW = new Set((process.env.FUZZ_ALLOW ?? '').split(',').filter(Boolean));

let server: TestServer | undefined;
after(async () => {
  await server?.stop('SIGKILL');
  server?.cleanup();
});

test(`fuzz: ${REQUESTS} requests, seed ${SEED}`, { timeout: 120_000 }, async (t) => {
  server = await startServer();
  const proc = server.proc;
  let serverLog = '';
  proc.stderr!.on('data', (d) => { serverLog = (serverLog + d).slice(-4000); });
  const report = await runFuzz({
    url: server.url, seed: SEED, requests: REQUESTS, timeBudgetMs: TIME_BUDGET_MS, concurrency: 8,
    exited: new Promise((r) => proc.once('exit', r)),
    alive: () => proc.exitCode === null && proc.signalCode === null, log: (l) => t.diagnostic(l),
  });
  t.diagnostic(`seed ${SEED}: ${report.sent} sent (${report.raw} raw, ${report.watches} watches, ${report.checkedWrites} checked writes) in ${report.durationMs} ms; ` +
    `statuses ${JSON.stringify(report.statusCounts)}; ${report.storedObjectsChecked} stored objects checked; findings ${JSON.stringify(report.findingCounts)}`);
  if (report.stoppedByTime) t.diagnostic(`stopped by the ${TIME_BUDGET_MS} ms budget after ${report.sent} requests`);
  for (const f of report.findings.slice(0, 20)) t.diagnostic(`${f.kind} #${f.index}: ${f.detail}\n  ${f.request.slice(0, 600)}`);
  if (report.crashed) t.diagnostic(`server exit: code ${proc.exitCode} signal ${proc.signalCode}; last stderr:\n${serverLog}`);
  assert.equal(report.crashed, false, 'the server process stayed alive');
  assert.ok(proc.exitCode === null && proc.signalCode === null, 'the server process is still running');
  // time-bounded: on a loaded machine fewer requests fit in the budget; a few hundred still cover every family
  assert.ok(report.sent >= Math.min(REQUESTS, 200), `a meaningful number of requests was sent (${report.sent})`);
  const failing = Object.fromEntries(Object.entries(report.findingCounts).filter(([k]) => !ALLOW.has(k)));
  assert.deepEqual(failing, {}, `no findings (reproduce with FUZZ_SEED=${SEED})`);
});
