/**
 * src/codec/cbor-deep.ts writes the bytes cbor-x writes for the JSON data model, at any depth;
 * decodeCbor (src/codec/cbor.ts) refuses items nested past MAX_NESTING_DEPTH.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from 'cbor-x';
import { encodeCborIterative } from '../../src/codec/cbor-deep.js';
import { CborDecodeError, decodeCbor, encodeCborItem } from '../../src/codec/cbor.js';
import { MAX_NESTING_DEPTH } from '../../src/schema/depth.js';
import { randomValues } from '../helpers/random-json.js';

test('the iterative encoder writes the bytes cbor-x writes for JSON values', () => {
  const scalars = [
    0,
    23,
    24,
    255,
    256,
    65535,
    65536,
    2 ** 32 - 1,
    2 ** 32,
    -1,
    -24,
    -25,
    -(2 ** 32),
    -(2 ** 32) - 1,
    2 ** 53 - 1,
    1.5,
    -0.1,
    1e300,
    '',
    'é',
    'x'.repeat(300),
    true,
    false,
    null,
  ];
  for (const v of [...scalars, ...randomValues(2000).map((x) => JSON.parse(JSON.stringify(x ?? null)))]) {
    assert.deepEqual(Buffer.from(encodeCborIterative(v)), Buffer.from(encodeCborItem(v)), JSON.stringify(v));
  }
});

test('a value nested past cbor-x recursion is encoded (iteratively) and reads back', () => {
  let v: unknown = { k: 'v' };
  for (let i = 0; i < 50_000; i++) v = { a: [v] };
  const bytes = encodeCborItem(v);
  assert.equal(bytes.length, 50_000 * 4 + 5);
  assert.deepEqual(Buffer.from(bytes.subarray(0, 4)), Buffer.from([0xa1, 0x61, 0x61, 0x81]));
  let small: unknown = 1;
  for (let i = 0; i < 100; i++) small = [small];
  assert.deepEqual(decode(encodeCborItem(small)), small);
});

test('decodeCbor: level 1,000 decodes, level 1,001 is upstream\'s "exceeded max nested level"', () => {
  const arrays = (n: number): Uint8Array => Uint8Array.from([...Array<number>(n).fill(0x81), 0x01]);
  assert.ok(decodeCbor(arrays(MAX_NESTING_DEPTH)));
  assert.throws(
    () => decodeCbor(arrays(MAX_NESTING_DEPTH + 1)),
    (e: unknown) => e instanceof CborDecodeError && /exceeded max nested level 1000/.test(e.message),
  );
});
