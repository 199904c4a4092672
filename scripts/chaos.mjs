// Long crash-consistency runs: `npm run chaos -- --trials 100 [--seed N] [--writers 12]
// [--minutes 60] [--json report.json]`. Needs the compiled dist/ (`npm run build`).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '20' },
    seed: { type: 'string' },
    writers: { type: 'string', default: '12' },
    minutes: { type: 'string', default: '120' },
    json: { type: 'string' },
  },
});
const { runChaos } = await import('../dist/test/chaos/harness.js');
const seed = values.seed !== undefined ? Number(values.seed) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
console.log(`chaos: ${values.trials} trials, seed ${seed}`);
const report = await runChaos({
  seed,
  trials: Number(values.trials),
  writers: Number(values.writers),
  timeBudgetMs: Number(values.minutes) * 60_000,
  log: (l) => console.log(l),
});
const { problems, lost, ...summary } = report;
console.log(JSON.stringify({ ...summary, lostCount: lost.length, problemCount: problems.length }, null, 2));
for (const p of problems.slice(0, 100)) console.log(p);
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(report, (_, v) => (typeof v === 'bigint' ? String(v) : v), 2),
  );
process.exit(lost.length || problems.length ? 1 : 0);
