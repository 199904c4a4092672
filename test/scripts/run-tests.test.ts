/**
 * The order of a full run (scripts/lib/test-order.mjs, scripts/lib/run-ordered.mjs): files run
 * longest first by the recorded table, shuffled within files of about the same duration, in the
 * order given (`node --test` sorts its arguments); the etcd re-run's files are shims that set
 * PLAT_TEST_STORAGE=etcd3 before the suite loads.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface TestOrder {
  durationKey(file: string): string;
  orderByDuration(files: string[], durations: Record<string, number>, shuffle: (l: string[]) => string[]): string[];
  writeEtcdShims(files: string[]): string[];
}

const lib = async (): Promise<TestOrder> =>
  (await import(pathToFileURL(resolve('scripts/lib/test-order.mjs')).href)) as TestOrder;

const reverse = (l: string[]) => [...l].reverse();
// a run started from inside a test file's process must not think it is one of the runner's children
const { NODE_TEST_CONTEXT: _, ...runnerEnv } = process.env;
const identity = (l: string[]) => [...l];

test('durationKey names a file by its path under dist/test, an etcd shim with @etcd', async () => {
  const { durationKey } = await lib();
  assert.equal(durationKey('dist/test/registry/crud.test.js'), 'registry/crud');
  assert.equal(durationKey('/w/dist/test/registry/crud.test.js'), 'registry/crud');
  assert.equal(durationKey('dist/test-etcd/registry/crud.test.js'), 'registry/crud@etcd');
  assert.equal(durationKey('/w/dist/test-etcd/handlers/watch.test.js'), 'handlers/watch@etcd');
});

test('longest first; files of about the same duration in the shuffle order; unknown files count as the median', async () => {
  const { orderByDuration } = await lib();
  const f = (n: string) => `dist/test/${n}.test.js`;
  const files = ['a', 'b', 'c', 'd', 'e', 'new'].map(f);
  const durations = { a: 1, b: 40, c: 41, d: 10, e: 0.5 };
  // b and c share a bucket (within √2): the shuffle decides between them
  assert.deepEqual(orderByDuration(files, durations, identity), ['b', 'c', 'd', 'new', 'a', 'e'].map(f));
  assert.deepEqual(orderByDuration(files, durations, reverse), ['c', 'b', 'new', 'd', 'a', 'e'].map(f));
  // the etcd shim of a file has its own entry
  const shim = 'dist/test-etcd/d.test.js';
  assert.deepEqual(orderByDuration([f('d'), shim, f('b')], { ...durations, 'd@etcd': 100 }, identity), [
    shim,
    f('b'),
    f('d'),
  ]);
  // without a table, the order is the shuffle
  assert.deepEqual(orderByDuration(files, {}, reverse), reverse(files));
});

test('an etcd shim sets PLAT_TEST_STORAGE=etcd3 before its suite loads and reports its tests under the etcd re-run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-order-'));
  try {
    mkdirSync(join(dir, 'dist/test/registry'), { recursive: true });
    writeFileSync(
      join(dir, 'dist/test/registry/crud.test.js'),
      [
        "import { test, before } from 'node:test';",
        'let seen;',
        'before(() => { seen = process.env.PLAT_TEST_STORAGE; });',
        "test('sees etcd3', () => { if (seen !== 'etcd3') throw new Error(`PLAT_TEST_STORAGE=${seen}`); });",
        '',
      ].join('\n'),
    );
    const code = `import(${JSON.stringify(pathToFileURL(resolve('scripts/lib/test-order.mjs')).href)}).then((m) => console.log(JSON.stringify(m.writeEtcdShims(['dist/test/registry/crud.test.js']))))`;
    const made = spawnSync(process.execPath, ['-e', code], { cwd: dir, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    assert.deepEqual(JSON.parse(made.stdout), ['dist/test-etcd/registry/crud.test.js']);
    const list = join(dir, 'list.json');
    writeFileSync(list, JSON.stringify([join(dir, 'dist/test-etcd/registry/crud.test.js')]));
    const durations = join(dir, 'durations.json');
    const ran = spawnSync(process.execPath, [resolve('scripts/lib/run-ordered.mjs'), list], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...runnerEnv, PLAT_TEST_STORAGE: '', TEST_DURATIONS_OUT: durations },
    });
    assert.equal(ran.status, 0, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /etcd re-run \(PLAT_TEST_STORAGE=etcd3\): registry\/crud/);
    assert.match(ran.stdout, /ok 1 - sees etcd3/);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(durations, 'utf8')).seconds), ['registry/crud@etcd']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run-ordered runs the files in the order given, two at a time, and fails when one fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-order-'));
  const log = join(dir, 'log.txt');
  try {
    // each file logs when its test starts and ends (files are processes: a file starts when a slot is free)
    const file = (name: string, fail = false) => {
      const p = join(dir, `${name}.test.mjs`);
      writeFileSync(
        p,
        [
          "import { test } from 'node:test';",
          "import { appendFileSync } from 'node:fs';",
          `test(${JSON.stringify(name)}, () => {`,
          `  appendFileSync(${JSON.stringify(log)}, 'start ${name}\\n');`,
          `  appendFileSync(${JSON.stringify(log)}, 'end ${name}\\n');`,
          fail ? "  throw new Error('planted');" : '',
          '});',
        ].join('\n'),
      );
      return p;
    };
    const list = join(dir, 'list.json');
    // `node --test` would start a.test.mjs first (it sorts); the list puts it last
    writeFileSync(list, JSON.stringify([file('z'), file('y'), file('a')]));
    const ok = spawnSync(process.execPath, ['scripts/lib/run-ordered.mjs', list], {
      encoding: 'utf8',
      env: { ...runnerEnv, TEST_DURATIONS_OUT: join(dir, 'durations.json') },
    });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(lines.length, 6);
    assert.ok(lines.indexOf('start a') > lines.indexOf('start z'), lines.join(', '));
    assert.ok(lines.indexOf('start a') > lines.indexOf('start y'), lines.join(', '));
    const durations = Object.values(JSON.parse(readFileSync(join(dir, 'durations.json'), 'utf8')).seconds);
    assert.equal(durations.length, 3, 'a wall time per file');
    assert.ok(durations.every((s) => typeof s === 'number' && s >= 0));

    writeFileSync(list, JSON.stringify([file('b', true), file('a')]));
    const failures = join(dir, 'failures.txt');
    const failed = spawnSync(process.execPath, ['scripts/lib/run-ordered.mjs', list], {
      encoding: 'utf8',
      env: { ...runnerEnv, TEST_FAILURES_OUT: failures },
    });
    assert.equal(failed.status, 1, failed.stdout);
    assert.match(failed.stdout, /planted/);
    // the failed test, named once with its error's first line (run-tests.mjs prints these last)
    assert.deepEqual(readFileSync(failures, 'utf8'), `${join(dir, 'b.test.mjs')} :: b :: planted\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface TestScratch {
  testScratchDir(env: Record<string, string | undefined>, candidate?: string): string | undefined;
}

test('test data directories: a tmpfs with room, else the system temp dir; TEST_TMPDIR picks or keeps', async () => {
  const { testScratchDir } = (await import(pathToFileURL(resolve('scripts/lib/test-scratch.mjs')).href)) as TestScratch;
  const base = mkdtempSync(join(tmpdir(), 'plat-scratch-'));
  try {
    assert.equal(testScratchDir({ TEST_TMPDIR: 'os' }), undefined);
    assert.equal(testScratchDir({ TMPDIR: base }), undefined, 'an explicit TMPDIR is kept');
    const picked = testScratchDir({ TEST_TMPDIR: base });
    assert.ok(picked?.startsWith(join(base, 'plat-tests-')), String(picked));
    // a folder that is not a tmpfs mount (the worktree) is never taken
    assert.equal(testScratchDir({}, resolve('scripts')), undefined);
    assert.equal(testScratchDir({}, join(base, 'missing')), undefined);
    const shm = testScratchDir({});
    if (shm !== undefined) {
      assert.ok(shm.startsWith('/dev/shm/plat-tests-'), shm);
      rmSync(shm, { recursive: true, force: true });
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a full run on a scratch tree: every file, the etcd re-run through its shim, the alone sample, test data under TEST_TMPDIR', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-fullrun-'));
  try {
    for (const f of [
      'run-tests.mjs',
      'lib/test-names.mjs',
      'lib/test-order.mjs',
      'lib/run-ordered.mjs',
      'lib/test-scratch.mjs',
    ]) {
      mkdirSync(dirname(join(dir, 'scripts', f)), { recursive: true });
      writeFileSync(join(dir, 'scripts', f), readFileSync(join('scripts', f)));
    }
    mkdirSync(join(dir, 'dist/bench/lib'), { recursive: true });
    writeFileSync(join(dir, 'dist/bench/lib/mulberry32.js'), readFileSync('dist/bench/lib/mulberry32.js'));
    const log = join(dir, 'log.txt');
    const suite = (name: string) =>
      [
        "import { test } from 'node:test';",
        "import { appendFileSync } from 'node:fs';",
        `test(${JSON.stringify(name)}, () => {`,
        `  appendFileSync(${JSON.stringify(log)}, [${JSON.stringify(name)}, process.env.PLAT_TEST_STORAGE ?? 'lmdb', process.env.TMPDIR].join(' ') + '\\n');`,
        '});',
        '',
      ].join('\n');
    mkdirSync(join(dir, 'dist/test/registry'), { recursive: true });
    mkdirSync(join(dir, 'dist/test/other'), { recursive: true });
    writeFileSync(join(dir, 'dist/test/registry/scale.test.js'), suite('scale'));
    writeFileSync(join(dir, 'dist/test/other/plain.test.js'), suite('plain'));
    const scratch = join(dir, 'tmp');
    mkdirSync(scratch);
    const r = spawnSync(process.execPath, ['scripts/run-tests.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...runnerEnv, ETCD_BIN: '/bin/true', TEST_TMPDIR: scratch, TEST_SEED: '1', TEST_ALONE_SAMPLE: '1' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# 1 resource, watch and patch suites also run on etcd/);
    assert.match(r.stdout, /# alone \(seed 1\): dist\/test\/\S+ :: (scale|plain)/);
    const lines = readFileSync(log, 'utf8').trim().split('\n').sort();
    // the LMDB run of both files, the etcd re-run of the suite, then the one drawn test alone
    assert.equal(lines.length, 4, lines.join('\n'));
    const runs = lines.map((l) => l.split(' ').slice(0, 2).join(' '));
    assert.ok(runs.includes('scale etcd3'), runs.join(', '));
    assert.equal(runs.filter((x) => x === 'scale lmdb' || x === 'plain lmdb').length >= 2, true, runs.join(', '));
    assert.ok(
      lines.every((l) => l.split(' ')[2]!.startsWith(join(scratch, 'plat-tests-'))),
      lines.join('\n'),
    );
    assert.deepEqual(readdirSync(scratch), [], 'the scratch directory is removed after the run');

    // a failed subtest: the run fails and its output ends with the failure named (a CI log's tail)
    writeFileSync(
      join(dir, 'dist/test/other/broken.test.js'),
      [
        "import { test } from 'node:test';",
        "test('outer', async (t) => { await t.test('inner', () => { throw new Error('planted\\nsecond line'); }); });",
        '',
      ].join('\n'),
    );
    const bad = spawnSync(process.execPath, ['scripts/run-tests.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...runnerEnv, ETCD_BIN: '/bin/true', TEST_TMPDIR: scratch, TEST_SEED: '1', TEST_ALONE_SAMPLE: '0' },
    });
    assert.equal(bad.status, 1, bad.stdout + bad.stderr);
    const tail = bad.stderr.trim().split('\n').slice(-2);
    assert.deepEqual(tail, [
      '# 1 FAILED (TEST_SEED=1):',
      `#   ${resolve(dir, 'dist/test/other/broken.test.js')} :: inner :: planted`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
