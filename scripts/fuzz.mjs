// Long fuzz runs: `npm run fuzz -- --requests 50000 [--seed N] [--concurrency 8] [--minutes 60]
// [--url http://127.0.0.1:PORT] [--json report.json]`. Starts its own server on a fresh data
// directory unless --url is given; needs the compiled dist/ (`npm run build`).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    minutes: { type: 'string', default: '120' },
    url: { type: 'string' },
    json: { type: 'string' },
    only: { type: 'string' },
  },
});
const { runFuzz } = await import('../dist/test/fuzz/runner.js');
const { startServer } = await import('../dist/test/helpers/server.js');

const seed = values.seed !== undefined ? Number(values.seed) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
const requests = Number(values.requests);
console.log(`fuzz: ${requests} requests, seed ${seed}`);
const server = values.url ? undefined : await startServer();
const url = values.url ?? server.url;
const proc = server?.proc;
let serverLog = '';
const keep = (d) => {
  serverLog = (serverLog + d).slice(-8000);
};
proc?.stderr.on('data', keep);
proc?.stdout.on('data', keep);
let report;
try {
  report = await runFuzz({
    url,
    seed,
    requests,
    timeBudgetMs: Number(values.minutes) * 60_000,
    concurrency: Number(values.concurrency),
    only: values.only ? values.only.split(',').map(Number) : undefined,
    exited: proc ? new Promise((r) => proc.once('exit', r)) : undefined,
    alive: () => !proc || (proc.exitCode === null && proc.signalCode === null),
    log: (l) => console.log(l),
  });
} finally {
  await server?.stop('SIGKILL');
  server?.cleanup();
}
const total = Object.values(report.findingCounts).reduce((a, b) => a + b, 0);
const fivexx = Object.entries(report.statusCounts)
  .filter(([s]) => Number(s) >= 500)
  .reduce((a, [, n]) => a + n, 0);
console.log(
  JSON.stringify(
    {
      seed,
      sent: report.sent,
      raw: report.raw,
      watches: report.watches,
      checkedWrites: report.checkedWrites,
      durationMs: report.durationMs,
      crashed: report.crashed,
      statusCounts: report.statusCounts,
      fiveXX: fivexx,
      findingCounts: report.findingCounts,
      storedObjectsChecked: report.storedObjectsChecked,
      skippedDeleting: report.skippedDeleting,
      stoppedByTime: report.stoppedByTime,
      retries: report.retries,
      protocolRejections: report.protocolRejections,
      limitations: report.limitations,
      clientRefused: report.clientRefused,
      watchesCutByClient: report.watchesCutByClient,
    },
    null,
    2,
  ),
);
console.log('slowest cases:');
for (const [ms, i, what] of report.slowest) console.log(`  ${ms} ms #${i} ${what}`);
// one example per distinct finding (kind + message with numbers and quoted values blanked)
const signature = (f) =>
  `${f.kind}: ${f.detail
    .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, 'UID')
    .replace(/\d+/g, 'N')
    .replace(/"(name|resourceVersion|uid)":"[^"]*"/g, '"$1":…')
    .slice(0, 200)}`;
const examples = new Map();
for (const f of report.findings) if (!examples.has(signature(f))) examples.set(signature(f), f);
console.log(`${examples.size} distinct findings:`);
for (const [sig, f] of examples) console.log(`- ${sig}\n  e.g. #${f.index}: ${f.request.slice(0, 600)}`);
if (report.crashed)
  console.log(`server exit: code ${proc?.exitCode} signal ${proc?.signalCode}; last output:\n${serverLog}`);
if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
process.exit(report.crashed || total > 0 ? 1 : 0);
