/**
 * The alone draw of scripts/run-tests.mjs and `scripts/sweep-alone.mjs --tests` share their
 * candidates (scripts/lib/test-names.mjs): top-level tests named by a plain string, less any name
 * another test or suite of the file also uses (`--test-name-pattern=^name$` would run both). The
 * sweep runs each candidate alone and reports, with file:line, a test that only passes after the
 * tests before it, and a run whose pattern ran another test too.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface TestNames {
  aloneCandidates(src: string): { names: string[]; duplicates: string[] };
  alonePattern(name: string): string;
}

const lib = async (): Promise<TestNames> =>
  (await import(pathToFileURL(resolve('scripts/lib/test-names.mjs')).href)) as TestNames;

test('the draw takes top-level string-named tests, less names used twice in the file', async () => {
  const { aloneCandidates } = await lib();
  const src = [
    "import { test, describe, it } from 'node:test';",
    "test('plain', () => {});",
    "test('it\\'s quoted', () => {});",
    'test("double \\"quoted\\"", () => {});',
    "test('shared', () => {});",
    "describe('suite', () => { it('shared', () => {}); });",
    "test('parent', async (t) => { await t.test('twice', () => {}); });",
    "test('twice', () => {});",
    "test('a\\nnewline', () => {});",
    'test(`template`, () => {});',
    "  test('indented: not top level', () => {});",
  ].join('\n');
  assert.deepEqual(aloneCandidates(src), {
    names: ['plain', "it's quoted", 'double "quoted"', 'parent'],
    duplicates: ['shared', 'twice'],
  });
});

test('the pattern of one test matches its name exactly, special characters escaped', async () => {
  const { alonePattern } = await lib();
  const pattern = alonePattern('a (b) [c] x.y? 1+1 $5 /z');
  const re = new RegExp(pattern.replace('--test-name-pattern=', ''));
  assert.ok(re.test('a (b) [c] x.y? 1+1 $5 /z'));
  assert.ok(!re.test('a (b) [c] x.y? 1+1 $5 /z and more'));
  assert.ok(!re.test('a b c xzy 11 5 z'));
});

/** A scratch tree with one compiled test file and its TypeScript source (for file:line). */
function tree(body: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'sweep-tests-'));
  for (const path of ['dist/test/demo/order.test.js', 'test/demo/order.test.ts']) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), body.join('\n'));
  }
  return root;
}

test('the sweep runs every candidate alone and names the ones that fail alone, with file:line', () => {
  const root = tree([
    "import { test, describe, it } from 'node:test';",
    "import assert from 'node:assert/strict';",
    'let made = 0;',
    "test('makes the fixture', () => { made = 1; });",
    "test('reads the fixture the test before made', () => { assert.equal(made, 1); });",
    "test('stands alone', () => { assert.ok(true); });",
    "test('pair', () => {});",
    "describe('group', () => { it('pair', () => {}); });",
  ]);
  try {
    const r = spawnSync(
      process.execPath,
      [resolve('scripts/sweep-alone.mjs'), '--tests', '--no-snapshot', '--out', join(root, 'out'), '--jobs', '2'],
      { cwd: root, encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /# 3 tests alone from 1 files/);
    assert.match(r.stdout, /# FAIL: test\/demo\/order\.test\.ts:5 reads the fixture the test before made \(/);
    assert.match(r.stdout, /# 2 of 3 tests passed alone/);
    const report = JSON.parse(readFileSync(join(root, 'out/sweep-tests.json'), 'utf8')) as {
      rows: { name: string; status: string; where: string }[];
      duplicates: string[];
    };
    assert.deepEqual(
      report.rows.map((row) => [row.where, row.name, row.status]),
      [
        ['test/demo/order.test.ts:4', 'makes the fixture', 'pass'],
        ['test/demo/order.test.ts:5', 'reads the fixture the test before made', 'FAIL'],
        ['test/demo/order.test.ts:6', 'stands alone', 'pass'],
      ],
    );
    assert.deepEqual(report.duplicates, ['test/demo/order.test.ts :: pair']);
    assert.match(readFileSync(join(root, 'out/sweep-tests.md'), 'utf8'), /\| demo \| 3 \| 1 \|/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
