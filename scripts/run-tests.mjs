// Runs the compiled test files under dist/test with Node's built-in runner.
//
//   node scripts/run-tests.mjs [substring...]   files whose path contains a substring (all without)
//   TEST_SEED=n                                 the order of the files (and the alone sample) to repeat
//   --alone[=k] / TEST_ALONE_SAMPLE=k           also run k tests, drawn at random, each alone
//
// The files run in a shuffled order (the seed is printed): a file that only passes after
// another one shows up. A full run (no filter) also runs a sample of single tests alone (each
// with its file's hooks, nothing else of the file), so a test that leans on an earlier test's
// objects fails; then the etcd re-run of the resource suites.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { mulberry32 } from '../dist/bench/lib/mulberry32.js';
import { RUNNER_FLAGS, aloneCandidatesOf, alonePattern, isEtcdSuite } from './lib/test-names.mjs';

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
files = shuffle(files, rand);
console.log(`# test order seed ${seed} (TEST_SEED=${seed} repeats this order and sample)`);

// every server and shard a test starts deep-freezes its cached objects (src/storage/cacher/cached-entry.ts)
process.env.PLAT_FREEZE_STORED ??= '1';

const run = (list, env = process.env, extra = []) =>
  spawnSync(process.execPath, [...RUNNER_FLAGS, ...extra, ...list], {
    stdio: 'inherit',
    env,
  }).status ?? 1;

// the binary the etcd suites use: ETCD_BIN, else etcd on the PATH, else Debian's path
function etcdBinary() {
  if (process.env.ETCD_BIN) return process.env.ETCD_BIN;
  const which = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  return found || '/usr/bin/etcd';
}
const etcdBin = etcdBinary();
const env = { ...process.env, ETCD_BIN: etcdBin };

let status = run(files, env);

// a sample of single tests, each alone: the default sample costs about a minute on 2 cores
const sampleSize = aloneArg
  ? Number(aloneArg.split('=')[1] ?? 6)
  : full
    ? Number(process.env.TEST_ALONE_SAMPLE ?? 6)
    : 0;
if (!Number.isInteger(sampleSize) || sampleSize < 0) {
  console.error('the alone sample size (--alone=k, TEST_ALONE_SAMPLE) must be a non-negative integer');
  process.exit(2);
}
if (sampleSize > 0) {
  // (the candidates are what `node scripts/sweep-alone.mjs --tests` runs, every one alone)
  const candidates = files.flatMap((f) => aloneCandidatesOf(f).names.map((name) => ({ file: f, name })));
  const sample = shuffle(candidates, rand).slice(0, sampleSize);
  for (const { file, name } of sample) {
    console.log(`# alone (seed ${seed}): ${file} :: ${name}`);
    const code = run([file], env, [alonePattern(name)]);
    if (code !== 0)
      console.error(`# FAILED alone: ${file} :: ${name} (passes after the tests before it? TEST_SEED=${seed})`);
    status = code || status;
  }
}

// the full run also passes the resource, watch and patch suites on the etcd backend (one
// parameterised suite: test/helpers/server.ts starts every server on a per-file etcd; the files
// are ETCD_SUITES of scripts/lib/test-names.mjs); an etcd
// that cannot start fails the run: the re-run is part of the suite, never silently dropped
if (full && process.env.PLAT_TEST_STORAGE === undefined) {
  const probe = existsSync(etcdBin) ? spawnSync(etcdBin, ['--version'], { encoding: 'utf8' }) : undefined;
  if (probe?.status !== 0) {
    console.error(
      `# FAILED: the etcd re-run cannot start: ${etcdBin} ${probe ? `exited ${probe.status}: ${probe.stderr}` : 'does not exist'}; install etcd (Debian etcd-server) or set ETCD_BIN`,
    );
    status = 1;
  } else {
    console.log(`# the resource, watch and patch suites again, on etcd (PLAT_TEST_STORAGE=etcd3, ${etcdBin})`);
    const etcdFiles = files.filter(isEtcdSuite);
    // (never an empty list: node --test without files would run everything)
    status = (etcdFiles.length ? run(etcdFiles, { ...env, PLAT_TEST_STORAGE: 'etcd3' }) : 1) || status;
  }
}
process.exit(status);
