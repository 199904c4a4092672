// node scripts/sweep-alone.mjs [--jobs N] [--seed S] [--no-coverage] [--no-etcd] [--retry]
//                              [--file-timeout SECONDS] [--budget MINUTES] [--out DIR] [--etcd-only] [filter...]
// node scripts/sweep-alone.mjs --tests [--files SUBSTR]... [--jobs 1|2] [--test-timeout SECONDS]
//                              [--budget MINUTES] [--out DIR] [--no-snapshot]
//
// --tests: every TEST alone, the way the alone draw of run-tests.mjs runs one (the same
// candidates and `--test-name-pattern=^name$`, from scripts/lib/test-names.mjs): one `node --test`
// process per top-level test, TAP output checked to have run that test and no other, killed
// after --test-timeout (default 240 s). The script lowers its own priority to nice 10 (its
// children inherit it), runs without coverage or the etcd re-runs, and writes <out>/sweep-tests.md
// (per folder: tests swept, failed alone; every failure with file:line) and sweep-tests.json.
// Default <out>: reports/sweep-tests. Sweep a folder at a time (--files server/ --files authz/).
//
// Every compiled test file alone: one `node --test <file>` process per file (the runner's flags
// and env: ETCD_BIN, --test-timeout=180000), never two files in one process, so a file that only
// passes after another one fails here. The files run in a seeded shuffled order (the seed is
// printed, --seed repeats it); --jobs N runs N such processes side by side (still one file each).
// The resource suites of the etcd re-run (ETCD_SUITES of scripts/lib/test-names.mjs) are swept
// alone on etcd as well (--no-etcd skips them, --etcd-only runs only them: a second sweep can take
// them while the first one runs).
//
// The same sweep measures whole-suite coverage: every process a file starts writes V8 coverage
// (NODE_V8_COVERAGE), which is cut down to src/ and workers/ and merged into one file per test
// file as soon as it ends (the raw output of ~240 files would be tens of GB), then `c8 report`
// over the merged files prints the per-folder table of scripts/coverage-table.mjs.
//
// It runs on a snapshot of the worktree (copied to <out>/tree and built there with source
// maps): a rebuild of dist/ in the worktree during the long run cannot break it. --retry runs the
// files that failed once more, alone and one at a time, and says which passed then. --budget
// bounds the run: no file starts after that many minutes (the rest are listed as not run), and
// SIGINT/SIGTERM stop the running files (their process groups) before the script ends.
// Output: <out>/sweep.md (file -> pass/fail/time table), <out>/sweep.json, <out>/logs/*.log,
// <out>/coverage/coverage-summary.json. Default <out>: reports/sweep. Run it under `nice -n 15`.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mulberry32 } from '../dist/bench/lib/mulberry32.js';
import { sweepTests } from './lib/sweep-tests.mjs';
import { isEtcdSuite } from './lib/test-names.mjs';

const SKIP_COPY = new Set(['.git', 'node_modules', 'dist', 'coverage', 'reports', '.stryker-tmp', 'data', 'bench-out']);

function parse(argv) {
  const o = {
    jobs: 1,
    seed: Math.floor(Math.random() * 2 ** 31),
    coverage: true,
    etcd: true,
    etcdOnly: false,
    retry: false,
    fileTimeout: 900,
    budget: 0,
    out: '',
    filters: [],
    tests: false,
    testTimeout: 240,
    snapshot: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=', 2);
    const val = () => inline ?? argv[++i];
    if (k === '--jobs') o.jobs = Number(val());
    else if (k === '--seed') o.seed = Number(val());
    else if (k === '--no-coverage') o.coverage = false;
    else if (k === '--no-etcd') o.etcd = false;
    else if (k === '--etcd-only') o.etcdOnly = true;
    else if (k === '--retry') o.retry = true;
    else if (k === '--file-timeout') o.fileTimeout = Number(val());
    else if (k === '--budget') o.budget = Number(val());
    else if (k === '--out') o.out = val();
    else if (k === '--tests') o.tests = true;
    else if (k === '--files') o.filters.push(val());
    else if (k === '--test-timeout') o.testTimeout = Number(val());
    else if (k === '--no-snapshot') o.snapshot = false;
    else if (k.startsWith('--')) throw new Error(`unknown argument ${argv[i]}`);
    else o.filters.push(argv[i]);
  }
  for (const [name, v] of [
    ['--jobs', o.jobs],
    ['--seed', o.seed],
    ['--file-timeout', o.fileTimeout],
    ['--budget', o.budget],
    ['--test-timeout', o.testTimeout],
  ]) {
    const min = name === '--seed' || name === '--budget' ? 0 : 1;
    if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer >= ${min}, got "${v}"`);
  }
  if (o.tests) Object.assign(o, { coverage: false, etcd: false, etcdOnly: false });
  o.out ||= o.tests ? 'reports/sweep-tests' : 'reports/sweep';
  return o;
}

function collect(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

function shuffle(list, rand) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Copies the worktree (sources, tests, fixtures, scripts) and builds it there with source maps. */
function snapshot(tree) {
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  for (const name of readdirSync('.')) {
    if (SKIP_COPY.has(name)) continue;
    cpSync(name, join(tree, name), { recursive: true, filter: (src) => !src.endsWith('.log') });
  }
  symlinkSync(realpathSync('node_modules'), join(tree, 'node_modules'));
  const tsc = spawnSync(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', '.', '--sourceMap'], {
    cwd: tree,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) throw new Error('the build of the snapshot failed');
}

// the etcd binary as scripts/run-tests.mjs finds it
function etcdBinary() {
  if (process.env.ETCD_BIN) return process.env.ETCD_BIN;
  const which = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  return (which.status === 0 ? which.stdout.trim() : '') || '/usr/bin/etcd';
}

/**
 * Cuts the raw V8 coverage of one test file's processes down to the measured sources and merges
 * it into one process coverage (c8 merges the same way; counts add up, so nothing is lost).
 */
function foldCoverage(rawDir, outFile, tree, merge) {
  if (!existsSync(rawDir)) return;
  const keep = [pathToFileURL(join(tree, 'dist/src')).href + '/', pathToFileURL(join(tree, 'dist/workers')).href + '/'];
  const wanted = (url) => keep.some((k) => url.startsWith(k)) && !url.includes('/generated/');
  const covs = [];
  const maps = {};
  for (const name of readdirSync(rawDir)) {
    let cov;
    try {
      cov = JSON.parse(readFileSync(join(rawDir, name), 'utf8'));
    } catch {
      continue;
    } // a process killed mid-write
    if (!Array.isArray(cov?.result)) continue;
    covs.push({ result: cov.result.filter((s) => wanted(s.url)) });
    for (const [url, m] of Object.entries(cov['source-map-cache'] ?? {})) if (wanted(url)) maps[url] = m;
  }
  rmSync(rawDir, { recursive: true, force: true });
  if (covs.length) writeFileSync(outFile, JSON.stringify({ ...merge(covs), 'source-map-cache': maps }));
}

/** Runs one file alone; resolves with its outcome. Output goes to its log file. */
function runFile(entry, o, ctx) {
  const { tree, logs, raw, merged, env, merge } = ctx;
  const started = Date.now();
  const rawDir = join(raw, String(entry.n));
  const childEnv = { ...env, ...entry.env, ...(o.coverage ? { NODE_V8_COVERAGE: rawDir } : {}) };
  const log = join(logs, `${entry.n}-${(entry.logName ?? entry.label).replace(/[/ =]+/g, '_')}.log`);
  return new Promise((done) => {
    const out = [];
    const child = spawn(process.execPath, entry.argv ?? ['--test', '--test-timeout=180000', entry.file], {
      cwd: tree,
      env: childEnv,
      detached: true,
    });
    running.add(child.pid);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    const guard = setTimeout(
      () => {
        entry.timedOut = true;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      },
      (entry.argv ? o.testTimeout : o.fileTimeout) * 1000,
    );
    // a process the file left behind (it would hold the output pipes open) goes with its group
    let closed = false;
    child.on('exit', () =>
      setTimeout(() => {
        if (!closed)
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            /* all gone */
          }
      }, 5000).unref(),
    );
    child.on('close', (code, signal) => {
      closed = true;
      running.delete(child.pid);
      clearTimeout(guard);
      const text = Buffer.concat(out).toString('utf8');
      writeFileSync(log, text);
      const count = (k) => Number(text.match(new RegExp(`^# ${k} (\\d+)$`, 'm'))?.[1] ?? NaN);
      if (o.coverage) foldCoverage(rawDir, join(merged, `${entry.n}.json`), tree, merge);
      done({
        code: code ?? (signal ? 128 : 1),
        seconds: (Date.now() - started) / 1000,
        tests: count('tests'),
        pass: count('pass'),
        fail: count('fail'),
        cancelled: count('cancelled'),
        log: relative(process.cwd(), log),
        text,
      });
    });
  });
}

/** process group ids of the files running now (each file's `node --test` leads its own group) */
const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const pid of running)
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    process.exit(130);
  });
}

/** Runs the entries, `jobs` at a time; none starts once `stopAt` (ms since the epoch, 0 = never) has passed. */
async function pool(entries, jobs, stopAt, work) {
  const queue = [...entries];
  const results = new Map();
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      for (let e = queue.shift(); e && !(stopAt && Date.now() > stopAt); e = queue.shift())
        results.set(e, await work(e));
    }),
  );
  return results;
}

const o = parse(process.argv.slice(2));
const out = resolve(o.out);
const tree = o.snapshot ? join(out, 'tree') : process.cwd();
console.log(
  `# sweep seed ${o.seed} (--seed ${o.seed} repeats this order), ${o.jobs} job(s), ${o.snapshot ? `snapshot in ${relative(process.cwd(), tree)}` : 'on the built worktree (--no-snapshot)'}`,
);
if (o.snapshot) snapshot(tree);
for (const d of ['logs', 'raw', 'merged', 'coverage']) rmSync(join(out, d), { recursive: true, force: true });
const ctx = {
  tree,
  logs: join(out, 'logs'),
  raw: join(out, 'raw'),
  merged: join(out, 'merged'),
  // (NODE_TEST_CONTEXT: set when this script runs under a test; a child would report to it, not print TAP)
  env: { ...process.env, ETCD_BIN: etcdBinary(), NODE_TEST_CONTEXT: undefined },
  merge: o.coverage
    ? createRequire(join(tree, 'node_modules/c8/package.json'))('@bcoe/v8-coverage').mergeProcessCovs
    : undefined,
};
for (const d of [ctx.logs, ctx.raw, ctx.merged]) mkdirSync(d, { recursive: true });

let files = collect(join(tree, 'dist/test'))
  .map((f) => relative(tree, f))
  .sort();
if (o.filters.length) files = files.filter((f) => o.filters.some((x) => f.includes(x)));
if (files.length === 0) throw new Error(`no test file matches ${o.filters.join(' ')}`);
if (o.tests) await sweepTests(files, o, { ...ctx, out, runFile, pool });
const rand = mulberry32(o.seed);
const entries = o.etcdOnly
  ? []
  : shuffle(files, rand).map((file) => ({ file, label: file.replace(/^dist\//, ''), env: {} }));
if (o.etcd) {
  for (const file of files.filter(isEtcdSuite)) {
    entries.push({ file, label: `${file.replace(/^dist\//, '')} (etcd3)`, env: { PLAT_TEST_STORAGE: 'etcd3' } });
  }
}
entries.forEach((e, i) => {
  e.n = i + 1;
});
const alone = entries.filter((e) => !e.env.PLAT_TEST_STORAGE).length;
console.log(
  `# ${entries.length} runs: ${alone} files alone${o.etcd ? `, then ${entries.length - alone} on etcd` : ''}`,
);

const t0 = Date.now();
let doneCount = 0;
const results = await pool(entries, o.jobs, o.budget ? t0 + o.budget * 60000 : 0, async (e) => {
  const r = await runFile(e, o, ctx);
  r.timedOut = e.timedOut === true;
  doneCount++;
  console.log(
    `${String(doneCount).padStart(4)}/${entries.length} ${r.code === 0 ? 'pass' : 'FAIL'} ${r.seconds.toFixed(1).padStart(6)} s  ${e.label}${r.code === 0 ? '' : `  (${r.timedOut ? 'killed after --file-timeout' : `exit ${r.code}`}, ${r.log})`}`,
  );
  return r;
});

const notRun = entries.filter((e) => !results.has(e));
if (notRun.length) console.log(`# --budget ${o.budget} min spent: ${notRun.length} run(s) not started`);
const failed = entries.filter((e) => results.has(e) && results.get(e).code !== 0);
const retried = new Map();
if (o.retry && failed.length) {
  console.log(`# retry: ${failed.length} failed file(s) again, alone, one at a time`);
  for (const e of failed) {
    const again = { ...e, n: `${e.n}-retry` };
    const r = await runFile(again, o, ctx);
    retried.set(e, r);
    console.log(`     retry ${r.code === 0 ? 'pass' : 'FAIL'} ${r.seconds.toFixed(1).padStart(6)} s  ${e.label}`);
  }
}
const minutes = ((Date.now() - t0) / 60000).toFixed(1);

const rows = entries
  .filter((e) => results.has(e))
  .map((e) => {
    const r = results.get(e);
    const again = retried.get(e);
    const status =
      r.code === 0 ? 'pass' : again ? (again.code === 0 ? 'FAIL, pass on retry' : 'FAIL, FAIL on retry') : 'FAIL';
    return {
      file: e.label,
      status,
      seconds: r.seconds,
      tests: r.tests,
      pass: r.pass,
      fail: r.fail,
      cancelled: r.cancelled,
      log: r.log,
      retry: again ? { code: again.code, seconds: again.seconds, log: again.log } : undefined,
    };
  });
const passed = rows.filter((r) => r.status === 'pass').length;
const summary = `${passed} of ${rows.length} runs passed alone${notRun.length ? ` (${notRun.length} more not run: --budget)` : ''} (seed ${o.seed}, ${o.jobs} job(s), ${minutes} min${o.coverage ? ', under coverage' : ''}; load average at the end ${(
  await import('node:os')
)
  .loadavg()
  .map((x) => x.toFixed(1))
  .join(' ')})`;
const md = [
  `# sweep: every test file alone`,
  '',
  summary,
  '',
  '| # | File | Result | Time | Tests (pass/fail/cancelled) |',
  '|---:|---|---|---:|---|',
  ...rows.map(
    (r, i) =>
      `| ${i + 1} | \`${r.file}\` | ${r.status} | ${r.seconds.toFixed(1)} s | ${r.tests} (${r.pass}/${r.fail}/${r.cancelled}) |`,
  ),
  ...notRun.map((e) => `| | \`${e.label}\` | not run | | |`),
].join('\n');
writeFileSync(join(out, 'sweep.md'), `${md}\n`);
writeFileSync(
  join(out, 'sweep.json'),
  JSON.stringify(
    { seed: o.seed, jobs: o.jobs, minutes: Number(minutes), rows, notRun: notRun.map((e) => e.label) },
    null,
    2,
  ),
);
console.log(`# ${summary}`);
for (const r of rows.filter((x) => x.status !== 'pass')) console.log(`# ${r.status}: ${r.file} (${r.log})`);
console.log(`# table: ${relative(process.cwd(), join(out, 'sweep.md'))}`);

if (o.coverage) {
  const c8 = spawnSync(
    process.execPath,
    [
      'node_modules/c8/bin/c8.js',
      'report',
      '--all',
      '--merge-async',
      '--src',
      'dist/src',
      '--src',
      'dist/workers',
      '--include',
      'dist/src/**',
      '--include',
      'dist/workers/**',
      '--exclude',
      'dist/src/registry/generated/**',
      '--reporter',
      'json-summary',
      '--reporter',
      'text-summary',
      '--report-dir',
      join(out, 'coverage'),
      '--temp-directory',
      ctx.merged,
    ],
    { cwd: tree, stdio: 'inherit' },
  );
  if (c8.status !== 0) console.error('# c8 report failed');
  else
    spawnSync(process.execPath, [resolve('scripts/coverage-table.mjs'), join(out, 'coverage/coverage-summary.json')], {
      cwd: tree,
      stdio: 'inherit',
    });
}
process.exit(rows.length === passed && notRun.length === 0 ? 0 : 1);
