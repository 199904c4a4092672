// Runs the compiled test files under dist/test with Node's built-in runner.
//
//   node scripts/run-tests.mjs [substring...]   files whose path contains a substring (all without)
//   TEST_SEED=n                                 the order of the files (and the alone sample) to repeat
//   --alone[=k] / TEST_ALONE_SAMPLE=k           also run k tests, drawn at random, each alone
//   TEST_DURATIONS_OUT=path                     write each file's wall time (scripts/lib/run-ordered.mjs)
//
// The files run longest first (by the recorded table scripts/lib/test-durations.json), in a
// shuffled order within files of about the same duration (the seed is printed): a file that only
// passes after another one shows up. A full run (no filter) also runs the resource, watch and
// patch suites on etcd, as more files of the same run (scripts/lib/test-order.mjs), then a sample
// of single tests alone (each with its file's hooks, nothing else of the file), so a test that
// leans on an earlier test's objects fails.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { mulberry32 } from '../dist/bench/lib/mulberry32.js';
import { RUNNER_CONCURRENCY, RUNNER_FLAGS, aloneCandidatesOf, alonePattern, isEtcdSuite } from './lib/test-names.mjs';
import { orderByDuration, readDurations, writeEtcdShims } from './lib/test-order.mjs';
import { testScratchDir } from './lib/test-scratch.mjs';

function collect(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const random = mulberry32;

function shuffle(list, rand) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const args = process.argv.slice(2);
const aloneArg = args.find((a) => a === '--alone' || a.startsWith('--alone='));
const filter = args.filter((a) => !a.startsWith('--'));
const full = filter.length === 0;
const seed = process.env.TEST_SEED !== undefined ? Number(process.env.TEST_SEED) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isInteger(seed) || seed < 0) {
  console.error(`TEST_SEED must be a non-negative integer, got ${process.env.TEST_SEED}`);
  process.exit(2);
}
const rand = random(seed);
let files = collect('dist/test', []).sort();
if (!full) files = files.filter((f) => filter.some((x) => f.includes(x)));
// node --test without files would discover and run everything
if (files.length === 0) {
  console.error(`no test file matches ${filter.join(' ')}`);
  process.exit(1);
}
// every server and shard a test starts deep-freezes its cached objects (src/storage/cacher/cached-entry.ts)
process.env.PLAT_FREEZE_STORED ??= '1';

// the binary the etcd suites use: ETCD_BIN, else etcd on the PATH, else Debian's path
function etcdBinary() {
  if (process.env.ETCD_BIN) return process.env.ETCD_BIN;
  const which = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  return found || '/usr/bin/etcd';
}
const etcdBin = etcdBinary();
const scratch = testScratchDir(process.env);
const env = { ...process.env, ETCD_BIN: etcdBin, ...(scratch ? { TMPDIR: scratch } : {}) };
if (scratch) console.log(`# test data directories under ${scratch} (a tmpfs: TEST_TMPDIR=os keeps the system's)`);
let status = 0;

// the full run also passes the resource, watch and patch suites on the etcd backend (one
// parameterised suite: test/helpers/server.ts starts every server on a per-file etcd; the files
// are ETCD_SUITES of scripts/lib/test-names.mjs), each through a shim that sets
// PLAT_TEST_STORAGE=etcd3, in the same run as the rest; an etcd that cannot start fails the run:
// the re-run is part of the suite, never silently dropped
let etcdShims = [];
if (full && process.env.PLAT_TEST_STORAGE === undefined) {
  const probe = existsSync(etcdBin) ? spawnSync(etcdBin, ['--version'], { encoding: 'utf8' }) : undefined;
  const etcdFiles = files.filter(isEtcdSuite);
  if (probe?.status !== 0) {
    console.error(
      `# FAILED: the etcd re-run cannot start: ${etcdBin} ${probe ? `exited ${probe.status}: ${probe.stderr}` : 'does not exist'}; install etcd (Debian etcd-server) or set ETCD_BIN`,
    );
    status = 1;
  } else if (etcdFiles.length === 0) {
    console.error('# FAILED: no file of ETCD_SUITES (scripts/lib/test-names.mjs) to re-run on etcd');
    status = 1;
  } else {
    etcdShims = writeEtcdShims(etcdFiles);
    console.log(
      `# ${etcdShims.length} resource, watch and patch suites also run on etcd (dist/test-etcd/, PLAT_TEST_STORAGE=etcd3, ${etcdBin})`,
    );
  }
}

const ordered = orderByDuration([...files, ...etcdShims], readDurations(), (list) => shuffle(list, rand));
console.log(
  `# test order seed ${seed} (TEST_SEED=${seed} repeats this order and sample); longest first by scripts/lib/test-durations.json`,
);
const listDir = mkdtempSync(join(tmpdir(), 'plat-test-list-'));
const listFile = join(listDir, 'files.json');
writeFileSync(listFile, JSON.stringify(ordered));
const failuresFile = join(listDir, 'failures.txt');
writeFileSync(failuresFile, '');
// run-ordered.mjs keeps the order (`node --test` sorts its arguments); the runner's flags less
// --test are its own, so every file's process gets them as under `node --test`
const runnerArgs = RUNNER_FLAGS.filter((f) => f !== '--test');
status =
  (spawnSync(process.execPath, [...runnerArgs, 'scripts/lib/run-ordered.mjs', listFile], {
    stdio: 'inherit',
    env: { ...env, TEST_FAILURES_OUT: failuresFile },
  }).status ??
    1) ||
  status;
const failed = readFileSync(failuresFile, 'utf8').split('\n').filter(Boolean);
rmSync(listDir, { recursive: true, force: true });

// a sample of single tests, each alone (RUNNER_CONCURRENCY at a time, each one's output printed
// whole when it ends): the default sample costs about half a minute on 2 cores
const sampleSize = aloneArg
  ? Number(aloneArg.split('=')[1] ?? 6)
  : full
    ? Number(process.env.TEST_ALONE_SAMPLE ?? 6)
    : 0;
if (!Number.isInteger(sampleSize) || sampleSize < 0) {
  console.error('the alone sample size (--alone=k, TEST_ALONE_SAMPLE) must be a non-negative integer');
  process.exit(2);
}

/** Runs one test alone as `node --test` would, and resolves to its exit code after printing its output. */
function runAlone({ file, name }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...RUNNER_FLAGS, alonePattern(name), file], { env });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code, signal) => {
      process.stdout.write(`# alone (seed ${seed}): ${file} :: ${name}\n${out}`);
      if (code !== 0) {
        console.error(`# FAILED alone: ${file} :: ${name} (passes after the tests before it? TEST_SEED=${seed})`);
        failed.push(`${file} :: ${name} (alone)`);
      }
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

if (sampleSize > 0) {
  // (the candidates are what `node scripts/sweep-alone.mjs --tests` runs, every one alone)
  const candidates = files.flatMap((f) => aloneCandidatesOf(f).names.map((name) => ({ file: f, name })));
  const queue = shuffle(candidates, rand).slice(0, sampleSize);
  const slot = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) status = (await runAlone(next)) || status;
  };
  await Promise.all(Array.from({ length: RUNNER_CONCURRENCY }, slot));
}
if (scratch) rmSync(scratch, { recursive: true, force: true });
// the failures again, last: a log's tail names them (a failed file with no failed test still fails)
if (failed.length > 0)
  console.error(`# ${failed.length} FAILED (TEST_SEED=${seed}):\n${failed.map((f) => `#   ${f}`).join('\n')}`);
else if (status !== 0)
  console.error(`# FAILED with no failed test named (a file crashed or timed out?); TEST_SEED=${seed}`);
process.exit(status);
