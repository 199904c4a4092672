/**
 * A large Protobuf list's first encoding shared with a helper thread (src/codec/protobuf/encode-helper.ts):
 * the items the helper encodes are byte for byte those of the actor's own encoding, so is the list's
 * body; texts the helper cannot take as bytes (a lone surrogate, non-ASCII) are encoded right; and a
 * helper that dies mid-list leaves the list to the actor alone, same body, no hang.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEntries, encodeEntry, protobufFieldsSize, WARM_AT } from '../../../src/codec/codec.js';
import {
  helperFaults,
  helperStats,
  SHARE_MIN,
  START_MIN,
  startHelper,
  stopHelper,
} from '../../../src/codec/protobuf/encode-helper.js';
import { inSlab } from '../../../src/codec/item-slabs.js';
import { CachedEntry } from '../../../src/storage/cacher/cached-entry.js';
import { TypeCache } from '../../../src/storage/cacher/type-cache.js';
import type { Stored } from '../../../src/api/object.js';
import type { Encoding } from '../../../src/codec/types.js';

const PROTOBUF = { format: 'protobuf' } as Encoding;
const KEY = 'protobuf|v1';
const HEAD = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '9' } };
const N = SHARE_MIN * 3;

function pod(i: number): Stored {
  // the last items (the helper's first chunk: it takes from the back) vary their texts' encodings
  const odd = i >= N - 40 ? ['ü-é', 'x\ud800y', '\u{1F600}', '"quoted\\"', 'plain'][i % 5]! : 'plain';
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `p-${i}`,
      namespace: `ns-${i % 17}`,
      uid: `0000-${i}`,
      resourceVersion: String(i + 1),
      creationTimestamp: '2026-11-27T10:00:00Z',
      labels: { app: `a${i % 5}`, note: odd },
      managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    },
    spec: { containers: [{ name: 'c', image: `img:${i}`, args: [odd, String(i)] }], nodeName: `n-${i % 50}` },
  } as unknown as Stored;
}

const entryOf = (o: Stored): CachedEntry =>
  new CachedEntry(
    o.metadata.namespace!,
    o.metadata.name,
    Number(o.metadata.resourceVersion),
    JSON.stringify(o),
    'v1',
    undefined,
    {},
  );

const objects = Array.from({ length: N }, (_, i) => pod(i));
const fresh = (): CachedEntry[] => objects.map(entryOf);

/** One thread: each entry encoded alone (kept), then the list from the kept bytes. */
function reference(): { items: Buffer[]; body: Buffer } {
  const es = fresh();
  for (const e of es) encodeEntry(e, PROTOBUF, 'v1', 'Pod');
  return { items: es.map((e) => Buffer.from(e.encoded![KEY]!)), body: Buffer.from(encodeEntries(HEAD, es, PROTOBUF)) };
}

const ref = reference();

after(async () => {
  delete helperFaults.exitAt;
  await stopHelper();
});

test('a list shared with the helper thread: every item and the body byte for byte the one-thread encoding', async () => {
  assert.equal(await startHelper(), true);
  const before = helperStats.items;
  const es = fresh();
  const body = Buffer.from(encodeEntries(HEAD, es, PROTOBUF));
  assert.ok(helperStats.items - before >= 256, `${helperStats.items - before} items by the helper`);
  es.forEach((e, i) => {
    if (i < N - 40) {
      assert.ok(inSlab(e.encoded![KEY]!), `item ${i} kept in a slab`);
      // the helper's answers are shared memory like the actor's slabs: not the isolate's external memory
      assert.ok(e.encoded![KEY]!.buffer instanceof SharedArrayBuffer, `item ${i} in shared memory`);
    }
    assert.deepEqual(Buffer.from(e.encoded![KEY]!), ref.items[i], `item ${i}`);
  });
  assert.deepEqual(body, ref.body);
  // a streamed list's first page sizes every item the same way
  const sized = fresh();
  assert.equal(
    protobufFieldsSize(sized, 'v1'),
    protobufFieldsSize(
      ref.items.map((b) => ({ encoded: { [KEY]: b } }) as unknown as CachedEntry),
      'v1',
    ),
  );
  sized.forEach((e, i) => assert.deepEqual(Buffer.from(e.encoded![KEY]!), ref.items[i], `sized item ${i}`));
});

test('after a JSON list (the texts’ UTF-8 lengths known), ASCII texts are written as Latin-1: the same items and body', async () => {
  assert.equal(await startHelper(), true);
  const es = fresh();
  encodeEntries(HEAD, es, { format: 'json' } as Encoding); // measures each entry's jsonBytes
  const ascii = es.filter((e) => e.jsonBytes === e.json.length).length;
  assert.ok(ascii >= N - 40 && ascii < N, `${ascii} ASCII texts of ${N}`);
  const before = helperStats.items;
  const body = Buffer.from(encodeEntries(HEAD, es, PROTOBUF));
  assert.ok(helperStats.items - before >= 256, `${helperStats.items - before} items by the helper`);
  es.forEach((e, i) => assert.deepEqual(Buffer.from(e.encoded![KEY]!), ref.items[i], `item ${i}`));
  assert.deepEqual(body, ref.body);
});

test('a helper that dies mid-list: the list ends on the actor alone with the same body, and a new helper can start', async () => {
  await stopHelper();
  helperFaults.exitAt = 2; // answers the first chunk, exits on the second
  assert.equal(await startHelper(), true);
  const started = helperStats.started;
  const abandoned = helperStats.abandoned;
  const es = fresh();
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, es, PROTOBUF)), ref.body);
  assert.ok(helperStats.abandoned > abandoned, 'the chunk the helper took with it was encoded by the actor');
  es.forEach((e, i) => assert.deepEqual(Buffer.from(e.encoded![KEY]!), ref.items[i], `item ${i}`));
  delete helperFaults.exitAt;
  // the next list (below START_MIN: it starts none) runs on the actor alone
  const again = fresh();
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, again, PROTOBUF)), ref.body);
  assert.equal(await startHelper(), true);
  assert.equal(helperStats.started, started + 1, 'a new helper');
  const helped = helperStats.items;
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, fresh(), PROTOBUF)), ref.body);
  assert.ok(helperStats.items > helped, 'the new helper takes part');
});

test('a list below START_MIN, or whose items are encoded already, starts no helper', async () => {
  await stopHelper();
  const started = helperStats.started;
  assert.ok(N < START_MIN);
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, fresh(), PROTOBUF)), ref.body);
  const es = fresh();
  for (const e of es) encodeEntry(e, PROTOBUF, 'v1', 'Pod');
  assert.deepEqual(Buffer.from(encodeEntries(HEAD, es, PROTOBUF)), ref.body);
  assert.equal(helperStats.started, started);
});

test('a collection reaching WARM_AT entries starts the helper ahead of its first list', async () => {
  await stopHelper();
  const started = helperStats.started;
  const cache = new TypeCache(60_000);
  const one = objects[0]!;
  for (let i = 0; i < WARM_AT - 1; i++)
    cache.load(new CachedEntry('ns', `p-${i}`, 1, JSON.stringify(one), 'v1', undefined, {}));
  assert.equal(helperStats.started, started, 'not below WARM_AT');
  cache.apply('ADDED', new CachedEntry('ns', 'last', 2, JSON.stringify(one), 'v1', undefined, {}), Date.now());
  assert.equal(helperStats.started, started + 1);
  assert.equal(await startHelper(), true, 'the started helper is the one a list finds');
  assert.equal(helperStats.started, started + 1);
});
