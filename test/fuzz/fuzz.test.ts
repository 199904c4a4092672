/**
 * Bounded fuzz run for `npm test`: 2,000 generated requests against a real server, with a fixed
 * seed so every run of the suite sends the same cases. Fails on any crash, undocumented 5xx,
 * non-Status error, undecodable body, hang, half-written object, or stored object that is
 * unreadable or invalid at the end, and when fewer requests than configured were sent (a run
 * cut short by its time limit fails instead of passing on a fraction). The environment may only
 * widen it: FUZZ_REQUESTS=<n> above 2,000 sends more, FUZZ_SEED=<n> (or `random`) explores other
 * cases; no finding kind is tolerated (there is no knob for that).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { runFuzz } from './runner.js';

// npm test replays a fixed seed so CI is repeatable; FUZZ_SEED=random (or `npm run fuzz`) explores
const FIXED_SEED = 1219950693;
const SEED =
  process.env.FUZZ_SEED === 'random'
    ? (Date.now() ^ (process.pid << 16)) >>> 0
    : process.env.FUZZ_SEED
      ? Number(process.env.FUZZ_SEED) >>> 0
      : FIXED_SEED;
const DEFAULT_REQUESTS = 2000;
// a knob below the default is ignored: the environment never weakens the suite
const REQUESTS = Math.max(DEFAULT_REQUESTS, Number(process.env.FUZZ_REQUESTS ?? 0) || 0);
/**
 * A hang guard, not a size: 2,000 requests take ~12 s on a quiet 2-core machine and ~4 minutes
 * at load 25 (measured); a run stopped by it fails.
 */
const TIME_LIMIT_MS = 300_000 + REQUESTS * 50;

let server: TestServer | undefined;
after(async () => {
  await server?.stop('SIGKILL');
  server?.cleanup();
});

test(`fuzz: ${REQUESTS} requests, seed ${SEED}`, { timeout: TIME_LIMIT_MS + 60_000 }, async (t) => {
  server = await startServer();
  const proc = server.proc;
  let serverLog = '';
  proc.stderr!.on('data', (d) => {
    serverLog = (serverLog + d).slice(-4000);
  });
  const report = await runFuzz({
    url: server.url,
    seed: SEED,
    requests: REQUESTS,
    timeBudgetMs: TIME_LIMIT_MS,
    concurrency: 8,
    exited: new Promise((r) => proc.once('exit', r)),
    alive: () => proc.exitCode === null && proc.signalCode === null,
    log: (l) => t.diagnostic(l),
  });
  t.diagnostic(
    `seed ${SEED}: ${report.sent} sent (${report.raw} raw, ${report.watches} watches, ${report.checkedWrites} checked writes) in ${report.durationMs} ms; ` +
      `statuses ${JSON.stringify(report.statusCounts)}; ${report.storedObjectsChecked} stored objects checked; findings ${JSON.stringify(report.findingCounts)}`,
  );
  for (const f of report.findings.slice(0, 20))
    t.diagnostic(`${f.kind} #${f.index}: ${f.detail}\n  ${f.request.slice(0, 600)}`);
  if (report.crashed)
    t.diagnostic(`server exit: code ${proc.exitCode} signal ${proc.signalCode}; last stderr:\n${serverLog}`);
  assert.equal(report.crashed, false, 'the server process stayed alive');
  assert.ok(proc.exitCode === null && proc.signalCode === null, 'the server process is still running');
  assert.equal(
    report.stoppedByTime,
    false,
    `stopped by the ${TIME_LIMIT_MS} ms limit after ${report.sent} of ${REQUESTS} requests`,
  );
  assert.equal(report.sent, REQUESTS, 'every configured request was sent');
  assert.deepEqual(report.findingCounts, {}, `no findings (reproduce with FUZZ_SEED=${SEED})`);
});
