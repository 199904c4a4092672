/**
 * The layout of test/ (docs/testing.md "Layout"): every folder of tests mirrors a folder of src/
 * (or bench/, scripts/), less a short list of cross-cutting folders; and the suites the full run
 * re-runs on etcd (ETCD_SUITES of scripts/lib/test-names.mjs) name test files that exist, so a
 * moved or renamed suite cannot silently drop out of the etcd re-run.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Folders of tests that span layers, so mirror no single source folder. */
const CROSS_CUTTING = new Set([
  'authz', // the authorizers end to end (src/auth/authz), older than the mirror rule
  'chaos',
  'e2e',
  'fixtures',
  'fuzz',
  'helpers',
  'security',
]);

interface TestNames {
  ETCD_SUITES: string[];
  isEtcdSuite(file: string): boolean;
}

const lib = async (): Promise<TestNames> =>
  (await import(pathToFileURL(resolve('scripts/lib/test-names.mjs')).href)) as TestNames;

/** Folders under dir (paths relative to dir) that hold at least one *.test.ts file directly. */
function testFolders(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  let direct = false;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFolders(path, prefix ? `${prefix}/${name}` : name));
    else if (name.endsWith('.test.ts')) direct = true;
  }
  return direct && prefix ? [prefix, ...out] : out;
}

test('every folder of tests mirrors a folder of src/ (or bench/, scripts/), less the cross-cutting ones', () => {
  const folders = testFolders('test');
  assert.ok(folders.includes('server') && folders.includes('registry'), folders.join(' '));
  const astray = folders.filter((f) => {
    const top = f.split('/')[0] ?? f;
    if (CROSS_CUTTING.has(top)) return false;
    return top === 'bench' || top === 'scripts' ? !existsSync(f) : !existsSync(join('src', f));
  });
  assert.deepEqual(astray, [], `test folders with no src/ folder of that path: ${astray.join(', ')}`);
});

test('every etcd re-run suite is a test file, matched by its exact path only', async () => {
  const { ETCD_SUITES, isEtcdSuite } = await lib();
  assert.ok(ETCD_SUITES.length >= 6, 'the resource, watch and patch suites');
  const missing = ETCD_SUITES.filter((name) => !existsSync(join('test', `${name}.test.ts`)));
  assert.deepEqual(missing, [], `ETCD_SUITES names no test file: ${missing.join(', ')}`);
  for (const name of ETCD_SUITES) {
    assert.ok(isEtcdSuite(`dist/test/${name}.test.js`), name);
    assert.ok(!isEtcdSuite(`dist/test/${name}-extra.test.js`), `${name}-extra`);
  }
  assert.ok(!isEtcdSuite('dist/test/e2e/kubectl.test.js'));
});
