/**
 * The iterative fallbacks of src/schema/deep-value.ts write what JSON.stringify writes (checked
 * on random values, compact and indented) and handle values nested past the native recursion;
 * checkValueDepth (src/schema/depth.ts) measures the whole value, level 1 being the value itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyValue, stringifyIterative, stringifyValue } from '../../src/schema/deep-value.js';
import { DepthError, MAX_NESTING_DEPTH, checkValueDepth } from '../../src/schema/depth.js';
import { randomValues } from '../helpers/random-json.js';

const nested = (n: number): unknown => {
  let v: unknown = { leaf: [1, 'x'] };
  for (let i = 0; i < n; i++) v = { a: [v] };
  return v;
};

test('the iterative stringify writes what JSON.stringify writes, compact and indented', () => {
  for (const v of randomValues(2000)) {
    assert.equal(stringifyIterative(v, 0), JSON.stringify(v));
    assert.equal(stringifyIterative(v, 2), JSON.stringify(v, null, 2));
  }
  for (const v of [undefined, null, 1, 'x', [], {}, [undefined], { a: undefined }])
    assert.equal(stringifyIterative(v, 0), JSON.stringify(v));
});

test('values nested past the native recursion are written and copied (JSON.stringify and structuredClone throw)', () => {
  const v = nested(30_000);
  assert.throws(() => JSON.stringify(v), RangeError);
  assert.throws(() => structuredClone(v), RangeError);
  const text = stringifyValue(v);
  assert.equal(text, '{"a":['.repeat(30_000) + '{"leaf":[1,"x"]}' + ']}'.repeat(30_000));
  const copy = copyValue(v) as { a: unknown[] };
  assert.notEqual(copy, v);
  assert.equal(stringifyValue(copy), text);
  assert.equal(stringifyIterative(nested(300), 2), JSON.stringify(nested(300), null, 2));
});

test('checkValueDepth: the value is level 1; scalars add no level; linear on a 1,000,000-level value', () => {
  const at = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  checkValueDepth(at(MAX_NESTING_DEPTH));
  assert.throws(() => checkValueDepth(at(MAX_NESTING_DEPTH + 1)), DepthError);
  assert.throws(() => checkValueDepth(at(2), MAX_NESTING_DEPTH), DepthError);
  checkValueDepth({ a: at(MAX_NESTING_DEPTH - 1), b: 'x' });
  const started = Date.now();
  assert.throws(() => checkValueDepth(at(1_000_000)), DepthError);
  assert.ok(Date.now() - started < 5000);
});
