import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decode as cborxDecode } from 'cbor-x';
import { CborDecodeError, SELF_DESCRIBED, cborWatchEvent, decodeCbor, encodeCbor } from '../../src/codec/cbor.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';
import { allKinds, apiVersionOf, fullSample, minimalSample } from '../fixtures/protobuf/samples.js';

const codec = new ProtobufCodec();

describe('JSON ↔ Protobuf ↔ CBOR round trip of every built-in kind', () => {
  const kinds = allKinds().filter(({ gvk }) => codec.typeFor(gvk.group, gvk.version, gvk.kind));

  it('covers the kinds the OpenAPI document lists', () => assert.ok(kinds.length > 150, `${kinds.length} kinds`));

  for (const [name, sample] of [
    ['minimal', minimalSample],
    ['full', fullSample],
  ] as const) {
    it(`keeps ${name} samples unchanged through JSON → CBOR → Protobuf → CBOR → JSON`, () => {
      for (const { def, gvk } of kinds) {
        const obj = sample(def, gvk);
        const what = `${apiVersionOf(gvk)} ${gvk.kind}`;
        const viaJson = JSON.parse(JSON.stringify(obj));
        const fromCbor = decodeCbor(encodeCbor(viaJson));
        assert.deepEqual(fromCbor, obj, `${what}: JSON → CBOR`);
        const fromPb = codec.decodeObject(codec.encodeObject(fromCbor));
        assert.deepEqual(decodeCbor(encodeCbor(fromPb)), obj, `${what}: CBOR → Protobuf → CBOR`);
      }
    });
  }
});

describe('CBOR bodies', () => {
  it('are one self-described data item', () => {
    const bytes = encodeCbor({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: 'b' } });
    assert.deepEqual([...bytes.subarray(0, 3)], [0xd9, 0xd9, 0xf7]);
    assert.deepEqual(cborxDecode(bytes), { kind: 'ConfigMap', apiVersion: 'v1', data: { a: 'b' } });
  });

  it('decode with or without the tag; trailing data, truncation, byte strings and empty input are refused', () => {
    const item = encodeCbor({ a: [1, 2.5, null, true, 'x'] });
    assert.deepEqual(decodeCbor(item.subarray(3)), { a: [1, 2.5, null, true, 'x'] });
    for (const bad of [
      Buffer.concat([item, item]),
      item.subarray(0, item.length - 2),
      Uint8Array.of(0x41, 0x00),
      new Uint8Array(0),
    ]) {
      assert.throws(() => decodeCbor(bad), CborDecodeError);
    }
  });

  it('a watch event embeds the object item unchanged', () => {
    const object = encodeCbor({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' } });
    const ev = cborWatchEvent('MODIFIED', object);
    assert.deepEqual([...ev.subarray(0, 3)], [...SELF_DESCRIBED]);
    assert.ok(Buffer.from(ev.subarray(ev.length - object.length)).equals(Buffer.from(object)));
    assert.deepEqual(decodeCbor(ev), {
      type: 'MODIFIED',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' } },
    });
  });
});
