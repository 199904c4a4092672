/**
 * The CEL runtime is loaded on first use (src/cel/lazy.ts): no thread of a server start loads
 * @bufbuild/cel through a static import (the shard actors and the front thread each paid ~130 ms
 * of CPU for it at every start), and the first compile loads it, in the same module instance a
 * static import gets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staticImports } from '../helpers/import-graph.js';
import { celLoaded } from '../../src/cel/lazy.js';
import { compileExpression, evaluate } from '../../src/cel/compile.js';
import { toCelValue } from '../../src/cel/values.js';

for (const entry of ['workers/shard-actor.js', 'src/server/server.js']) {
  test(`${entry} loads no CEL runtime at start`, () => {
    const { files, packages } = staticImports(entry);
    assert.ok(files.size > 100, `${entry}: only ${files.size} modules found; the walk is broken`);
    const cel = [...packages].filter(([p]) => p.startsWith('@bufbuild/'));
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
