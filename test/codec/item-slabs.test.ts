/**
 * A LIST's item bytes are written into shared slabs (src/codec/item-slabs.ts), not one buffer per
 * item: same bytes as each object's own encoding, list bodies unchanged, a single object's bytes
 * (GET, watch) in a buffer of their own, and compaction: entries replaced in the type cache count
 * as dead in their slab, and the next list moves the survivors of a sparse slab out of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getHeapStatistics } from 'node:v8';
import { encodeEntries, encodeEntry, protobufCodec, protobufFieldsSize } from '../../src/codec/codec.js';
import { inSlab, SLAB_BYTES, sealSlab } from '../../src/codec/item-slabs.js';
import { CachedEntry } from '../../src/storage/cacher/cached-entry.js';
import { TypeCache } from '../../src/storage/cacher/type-cache.js';
import type { Stored } from '../../src/api/object.js';
import type { Encoding } from '../../src/codec/types.js';

const PROTOBUF = { format: 'protobuf' } as Encoding;
const KEY = 'protobuf|v1';
const HEAD = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' } };

function configMap(i: number, rv: number, value = 'v'.repeat(1500 + (i % 7))): Stored {
  return {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: `cm-${i}`, namespace: 'ns', resourceVersion: String(rv), uid: `u-${i}` },
    data: { k: value, ['ü' + i]: 'é' },
  } as unknown as Stored;
}

const entryOf = (o: Stored): CachedEntry =>
  new CachedEntry('ns', o.metadata.name, Number(o.metadata.resourceVersion), JSON.stringify(o), 'v1', undefined, {});

function entries(n: number, rv = 1): CachedEntry[] {
  return Array.from({ length: n }, (_, i) => entryOf(configMap(i, rv)));
}

test('a list writes its items into a few shared slabs, each byte for byte the object’s own encoding', () => {
  sealSlab();
  const es = entries(2000);
  const body = encodeEntries(HEAD, es, PROTOBUF) as Uint8Array;
  const buffers = new Set<ArrayBufferLike>();
  let total = 0;
  for (const e of es) {
    const bytes = e.encoded![KEY]!;
    assert.ok(inSlab(bytes));
    buffers.add(bytes.buffer);
    total += bytes.byteLength;
    assert.deepEqual(Buffer.from(bytes), Buffer.from(protobufCodec().encodeMessage(e.obj)));
  }
  assert.ok(buffers.size <= Math.ceil(total / SLAB_BYTES) + 1, `${buffers.size} buffers for ${total} bytes`);
  // the body is the list of the objects, as a list of own-buffer items would be
  const decoded = protobufCodec().decodeObject(body) as unknown as { items: Stored[]; metadata: unknown };
  assert.equal(decoded.items.length, 2000);
  const { kind: _k, apiVersion: _a, ...item } = es[1234]!.obj; // list items carry no type meta in Protobuf
  assert.deepEqual(decoded.items[1234], item);
  // a second list reads the kept bytes: same body
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, es, PROTOBUF)), Buffer.from(body));
});

test('kept item bytes are not counted as the isolate’s external memory (V8 collects for every ≈ 64 MB of it)', () => {
  sealSlab();
  const es = entries(3000);
  const before = getHeapStatistics().external_memory;
  protobufFieldsSize(es, 'v1'); // encodes and keeps every item, builds no body
  const grown = getHeapStatistics().external_memory - before;
  let kept = 0;
  for (const e of es) kept += e.encoded![KEY]!.byteLength;
  assert.ok(kept > 4 * 2 ** 20, `${kept} bytes kept`);
  assert.ok(grown < kept / 4, `external memory grew by ${grown} bytes for ${kept} bytes kept`);
  for (const e of es) assert.ok(e.encoded![KEY]!.buffer instanceof SharedArrayBuffer, 'a slab is shared memory');
});

test('a single object’s bytes (GET, watch) are kept in a buffer of their own', () => {
  const e = entryOf(configMap(1, 1));
  const one = encodeEntry(e, PROTOBUF, 'v1', 'ConfigMap');
  const bytes = e.encoded![KEY]!;
  assert.ok(!inSlab(bytes));
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.buffer.byteLength, bytes.byteLength);
  assert.deepEqual(protobufCodec().decodeObject(one), { ...e.obj });
});

test('replaced entries count as dead: the next list moves a sparse slab’s survivors out, a dense one’s stay', () => {
  const cache = new TypeCache(60_000);
  sealSlab();
  const es = entries(600);
  for (const e of es) cache.load(e);
  encodeEntries(HEAD, es, PROTOBUF);
  const first = es[0]!.encoded![KEY]!.buffer;
  const inFirst = es.filter((e) => e.encoded![KEY]!.buffer === first);
  assert.ok(inFirst.length > 100, `${inFirst.length} items in the first slab`);
  // replace all but 10% of the first slab's entries (a quarter is the threshold), and every other entry of the rest
  let rv = 2;
  const keep = new Set(inFirst.filter((_, i) => i % 10 === 0));
  const replaced = es.filter((e, i) => (e.encoded![KEY]!.buffer === first ? !keep.has(e) : i % 2 === 0));
  for (const e of replaced) cache.apply('MODIFIED', entryOf(configMap(Number(e.name.slice(3)), rv++, 'w')), rv);
  const now = [...cache.scan('', undefined)].map(([, e]) => e);
  const before = new Map(now.map((e) => [e, e.encoded?.[KEY]]));
  sealSlab();
  encodeEntries(HEAD, now, PROTOBUF);
  for (const e of keep) {
    const moved = e.encoded![KEY]!;
    assert.notEqual(moved.buffer, first, 'moved out of the sparse slab');
    assert.ok(inSlab(moved));
    assert.deepEqual(Buffer.from(moved), Buffer.from(before.get(e)!));
  }
  // survivors of slabs still half live stay where they are
  const stayed = now.filter((e) => before.get(e) && before.get(e)!.buffer !== first);
  assert.ok(stayed.length > 100);
  for (const e of stayed) assert.equal(e.encoded![KEY], before.get(e));
});
