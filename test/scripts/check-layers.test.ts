/**
 * scripts/check-layers.mjs on small scratch trees: the layer rules (folder pairs, cycles, upward
 * imports) fail whatever the baseline says; files over 400 lines, functions over 60 lines and
 * the `any` count are ratchets against the baseline.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const SCRIPT = resolve('scripts/check-layers.mjs');

/** A scratch repository: files relative to its root, and the baseline (scripts/layers-baseline.json). */
function tree(files: Record<string, string>, baseline: Record<string, unknown> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  for (const [path, text] of Object.entries({ ...files, 'scripts/layers-baseline.json': JSON.stringify(baseline) })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string): { code: number | null; out: string } {
  try {
    const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8', timeout: 90_000 });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const CLEAN = {
  'src/api/status.ts': 'export const ok = 1;\n',
  'src/handlers/get.ts': "import { ok } from '../api/status.js';\nexport const get = () => ok;\n",
  'src/server/server.ts': "import { get } from '../handlers/get.js';\nexport const serve = get;\n",
};

test('a tree importing only downward passes', () => {
  const { code, out } = check(tree(CLEAN));
  assert.equal(code, 0, out);
  assert.match(out, /0 folder pairs importing each other, 0 file cycles, 0 upward imports/);
});

test('an upward import fails even when the baseline lists it', () => {
  const files = {
    ...CLEAN,
    'src/api/status.ts': "import { serve } from '../server/server.js';\nexport const ok = serve;\n",
  };
  const { code, out } = check(tree(files, { upwardImports: ['api/status.ts -> server/server.ts'] }));
  assert.equal(code, 1, out);
  assert.match(out, /upwardImports: api\/status\.ts -> server\/server\.ts/);
  assert.match(out, /folderCycles: api handlers server/);
  assert.match(out, /fileCycles: /);
});

test('a file cycle inside one folder fails', () => {
  const files = {
    ...CLEAN,
    'src/handlers/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
    'src/handlers/b.ts': "import type { a } from './a.js';\nexport const b = 1 as unknown as typeof a;\n",
  };
  const { code, out } = check(tree(files));
  assert.equal(code, 1, out);
  assert.match(out, /fileCycles: handlers\/a\.ts handlers\/b\.ts/);
});

test('a function over 60 lines counts against the baseline ratchet', () => {
  const long = `export function long(): number {\n  let n = 0;\n${'  n++;\n'.repeat(60)}  return n;\n}\n`;
  const files = { ...CLEAN, 'src/handlers/long.ts': long };
  const over = check(tree(files, { longFunctionCount: 0 }));
  assert.equal(over.code, 1, over.out);
  assert.match(over.out, /longFunctions: 1 > baseline 0/);
  const within = check(tree(files, { longFunctionCount: 1 }));
  assert.equal(within.code, 0, within.out);
  assert.match(within.out, /1 functions over 60 lines/);
});
