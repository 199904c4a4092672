/**
 * The CEL runtime is loaded on first use (src/cel/lazy.ts): no thread of a server start loads
 * @bufbuild/cel through a static import (the shard actors and the front thread each paid ~130 ms
 * of CPU for it at every start), and the first compile loads it, in the same module instance a
 * static import gets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { celLoaded } from '../../src/cel/lazy.js';
import { compileExpression, evaluate } from '../../src/cel/compile.js';
import { toCelValue } from '../../src/cel/values.js';

const DIST = resolve(process.cwd(), 'dist');
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** The packages a compiled entry reaches through static imports (tsc erases type-only ones). */
function staticPackages(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [join(DIST, entry)];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (spec!.startsWith('.')) queue.push(resolve(dirname(file), spec!));
      else if (!spec!.startsWith('node:') && !packages.has(spec!)) packages.set(spec!, file.slice(DIST.length + 1));
    }
  }
  assert.ok(seen.size > 100, `${entry}: only ${seen.size} modules found; the walk is broken`);
  return packages;
}

for (const entry of ['workers/shard-actor.js', 'src/server/cli.js']) {
  test(`${entry} loads no CEL runtime at start`, () => {
    const cel = [...staticPackages(entry)].filter(([p]) => p.startsWith('@bufbuild/'));
    assert.deepEqual(cel, [], 'imported statically by');
  });
}

test('the first compile loads the runtime; values and evaluation use it', () => {
  // importing compile.js and values.js (as CRD rules do) did not load it
  assert.equal(celLoaded(), false);
  const c = compileExpression(
    'self.x + 1 == 3',
    { schema: { type: 'object', properties: { x: { type: 'integer' } } } },
    'bool',
  );
  assert.equal(c.error, undefined);
  assert.equal(celLoaded(), true);
  const self = toCelValue({ x: 2 }, { type: 'object', properties: { x: { type: 'integer' } } });
  assert.deepEqual(evaluate(c.program!, { self }), { value: true });
});
