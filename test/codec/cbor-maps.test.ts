/** The CBOR map key scan (src/codec/cbor-maps.ts): upstream's refusals, linear and iterative. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plainObjects, scanMapKeys } from '../../src/codec/cbor-maps.js';
import { decodeCbor } from '../../src/codec/cbor.js';

const hex = (h: string) => Uint8Array.from(Buffer.from(h.replace(/ /g, ''), 'hex'));

test('repeated keys are refused with their index, at any depth and in indefinite-length maps', () => {
  assert.throws(() => scanMapKeys(hex('a2 616b 6131 616b 6132')), {
    message: 'cbor: found duplicate map key "k" at map element index 1',
  });
  assert.throws(() => scanMapKeys(hex('d9d9f7 a2 6161 a2 6178 01 6178 02 6162 03')), {
    message: 'cbor: found duplicate map key "x" at map element index 1',
  });
  assert.throws(() => scanMapKeys(hex('bf 6161 01 6162 02 6161 03 ff')), {
    message: 'cbor: found duplicate map key "a" at map element index 2',
  });
  // the same key in sibling maps is fine; so are text keys that look like numbers
  assert.deepEqual(scanMapKeys(hex('82 a1 616b 01 a1 616b 02')), { needsMaps: false });
  assert.deepEqual(scanMapKeys(hex('a2 6131 01 6132 02')), { needsMaps: false });
});

test('non-string keys are refused as upstream decodes into map[string]interface{}', () => {
  assert.throws(() => scanMapKeys(hex('a2 01 6131 6131 6132')), {
    message: 'cbor: cannot unmarshal positive integer into Go value of type string',
  });
  assert.throws(() => scanMapKeys(hex('a1 20 01')), {
    message: 'cbor: cannot unmarshal negative integer into Go value of type string',
  });
  assert.throws(() => scanMapKeys(hex('a1 80 01')), {
    message: 'cbor: cannot unmarshal array into Go value of type string',
  });
  assert.throws(() => scanMapKeys(hex('a1 f5 01')), {
    message: 'cbor: cannot unmarshal primitives into Go value of type string',
  });
});

test('a __proto__ key asks for Map decoding, and the conversion keeps it as an own key', () => {
  const bytes = hex('a2 695f5f70726f746f5f5f a1 6161 01 6162 02');
  assert.deepEqual(scanMapKeys(bytes), { needsMaps: true });
  const obj = decodeCbor(bytes) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(obj), Object.prototype);
  assert.deepEqual(Object.keys(obj), ['__proto__', 'b']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(obj, '__proto__')?.value, { a: 1 });
  assert.deepEqual(
    plainObjects(new Map<unknown, unknown>([['x', [new Map([['__proto__', 1]])]]])),
    JSON.parse('{"x":[{"__proto__":1}]}'),
  );
});

test('the scan is iterative and linear: 200,000 nested arrays and 100,000 keys', () => {
  const deep = new Uint8Array(200_001).fill(0x81);
  deep[200_000] = 0x01;
  assert.deepEqual(scanMapKeys(deep), { needsMaps: false });
  const parts: Buffer[] = [Buffer.from([0xba, 0x00, 0x01, 0x86, 0xa0])];
  for (let i = 0; i < 100_000; i++) {
    const k = Buffer.from(`k${i}`);
    parts.push(Buffer.from([0x60 + k.length]), k, Buffer.from([0x01]));
  }
  // linear: each key is one lookup and one insert in the map's hash set (no pairwise compare),
  // counted instead of timed
  const counts = { has: 0, add: 0 };
  const { has, add } = Set.prototype;
  Set.prototype.has = function (this: Set<unknown>, v: unknown) {
    counts.has++;
    return has.call(this, v);
  };
  Set.prototype.add = function (this: Set<unknown>, v: unknown) {
    counts.add++;
    return add.call(this, v);
  };
  try {
    assert.deepEqual(scanMapKeys(Buffer.concat(parts)), { needsMaps: false });
  } finally {
    Set.prototype.has = has;
    Set.prototype.add = add;
  }
  assert.deepEqual(counts, { has: 100_000, add: 100_000 });
  // the last key repeating the first is found at its index
  const dup = Buffer.concat([...parts.slice(0, -3), Buffer.from([0x62]), Buffer.from('k0'), Buffer.from([0x01])]);
  assert.throws(() => scanMapKeys(dup), /found duplicate map key "k0" at map element index 99999/);
});
