/**
 * Cache entries keep their JSON and parse their object on demand, at most PARSED_MAX of them
 * parsed at a time (src/storage/cacher/cached-entry.ts): past the bound the oldest let go of
 * their object, and every read of an evicted object (GET and LIST, JSON and Protobuf, an update)
 * answers exactly what it answered while the object was parsed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CachedEntry, parsedCount, PARSED_MAX, setParsedMax } from '../../src/storage/cacher/cached-entry.js';
import type { TypeCache } from '../../src/storage/cacher/type-cache.js';
import { protobufCodec } from '../../src/codec/codec.js';
import { openShard, type LocalShard } from '../helpers/shard.js';
import type { Encoding, Op, Result } from '../../src/actors/protocol.js';

let local: LocalShard;
let nextId = 1;

before(async () => {
  local = await openShard('cached-entry');
});
after(() => {
  setParsedMax(PARSED_MAX);
  local.close();
});

const type = { group: '', version: 'v1', resource: 'configmaps' };
const JSON_ENC: Encoding = { format: 'json', pretty: false };
const PROTOBUF: Encoding = { format: 'protobuf', pretty: false };
const create = (namespace: string, name: string): Op => ({
  id: nextId++,
  op: 'create',
  type,
  enc: JSON_ENC,
  dryRun: false,
  namespace,
  body: {
    text: JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { app: name } },
      data: { k: `é ${name}` },
    }),
    contentType: 'json',
  },
});
const get = (namespace: string, name: string, enc = JSON_ENC): Op => ({
  id: nextId++,
  op: 'get',
  type,
  enc,
  namespace,
  name,
});
const list = (namespace: string, enc = JSON_ENC): Op => ({ id: nextId++, op: 'list', type, enc, namespace, opts: {} });

function body(r: Result): Buffer {
  assert.ok(!('error' in r), JSON.stringify(r));
  assert.ok('body' in r, 'not a watch');
  return Buffer.from(r.body);
}

/** A JSON list body from its items on (the head holds the list's resourceVersion). */
const itemsOf = (list: Buffer): string => {
  const text = list.toString('utf8');
  return text.slice(text.indexOf('"items":['));
};

const entriesOf = (namespace: string): CachedEntry[] => {
  const caches = (local.shard as unknown as { caches: Map<string, TypeCache> }).caches;
  return [...caches.get('/configmaps')!.scan(namespace, undefined)].map(([, e]) => e as CachedEntry);
};

test('unit: the oldest parsed entries let go of their object past the bound; obj parses it again, equal', () => {
  setParsedMax(3);
  const objs = [0, 1, 2, 3, 4].map((i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `u${i}` } }));
  const entries = objs.map((o, i) => new CachedEntry('', `u${i}`, i + 1, JSON.stringify(o), 'v1', undefined, {}, o));
  assert.equal(parsedCount(), 3);
  assert.deepEqual(
    entries.map((e) => e.isParsed),
    [false, false, true, true, true],
  );
  assert.equal(entries[4]!.obj, objs[4], 'a held object is the one written');
  const again = entries[0]!.obj;
  assert.notEqual(again, objs[0]);
  assert.deepEqual(again, objs[0]);
  assert.equal(entries[0]!.isParsed, true);
  assert.equal(entries[2]!.isParsed, false, 'the oldest let go to make room');
  assert.equal(parsedCount(), 3);
});

test('GET and LIST of evicted objects answer byte for byte what they answered parsed', async () => {
  setParsedMax(10_000);
  const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
  for (const r of (await local.shard.run(names.map((n) => create('evict', n)))).results) body(r);
  const gets = await local.shard.run(names.map((n) => get('evict', n)));
  const jsonGets = gets.results.map(body);
  const jsonList = body(await local.one(list('evict')));
  assert.ok(entriesOf('evict').every((e) => e.isParsed));

  // bound 2: three more writes hold the two places left
  setParsedMax(2);
  for (const r of (await local.shard.run([0, 1, 2].map((i) => create('other', `trigger-${i}`)))).results) body(r);
  assert.ok(
    entriesOf('evict').every((e) => !e.isParsed),
    'evicted',
  );

  // the list's resourceVersion moved with the writes: its items are the same bytes
  assert.equal(itemsOf(body(await local.one(list('evict')))), itemsOf(jsonList), 'JSON LIST from the JSON alone');
  assert.ok(
    entriesOf('evict').every((e) => !e.isParsed),
    'a JSON LIST parses no object',
  );
  const again = await local.shard.run(names.map((n) => get('evict', n)));
  assert.deepEqual(again.results.map(body), jsonGets, 'JSON GETs');
  // Protobuf encodes from the object, parsed again on demand: the same objects as the JSON LIST
  const proto = protobufCodec().decodeObject(body(await local.one(list('evict', PROTOBUF)))) as unknown as {
    items: unknown[];
  };
  // a Protobuf list's items carry no kind and apiVersion (upstream's too)
  const bare = JSON.parse(jsonList.toString('utf8')).items.map(
    ({ kind: _k, apiVersion: _a, ...o }: object & { kind: string; apiVersion: string }) => o,
  );
  assert.deepEqual(proto.items, bare);
  const one = protobufCodec().decodeObject(body(await local.one(get('evict', 'cm-3', PROTOBUF))));
  assert.deepEqual(one, JSON.parse(jsonGets[3]!.toString('utf8')));
  assert.ok(parsedCount() <= 2, 'the bound holds');
});

test('an update of an evicted object reads its old state parsed again', async () => {
  setParsedMax(2);
  body(await local.one(create('upd', 'u')));
  for (let i = 0; i < 3; i++) body(await local.one(create('other', `filler-${i}`)));
  assert.equal(entriesOf('upd')[0]!.isParsed, false);
  const patched = await local.one({
    id: nextId++,
    op: 'patch',
    type,
    enc: JSON_ENC,
    dryRun: false,
    namespace: 'upd',
    name: 'u',
    patchType: 'merge',
    text: JSON.stringify({ data: { k2: 'v2' } }),
    force: false,
  });
  const obj = JSON.parse(body(patched).toString('utf8'));
  assert.deepEqual(obj.data, { k: 'é u', k2: 'v2' });
  assert.deepEqual(obj.metadata.labels, { app: 'u' });
});

test('a Protobuf LIST of evicted objects parses each for its encoding only: the held objects stay held', async () => {
  setParsedMax(3);
  const names = Array.from({ length: 12 }, (_, i) => `churn-${i}`);
  for (const r of (await local.shard.run(names.map((n) => create('churn', n)))).results) body(r);
  // the three written last hold their objects; the nine before them were evicted
  const held = entriesOf('churn').filter((e) => e.isParsed);
  assert.deepEqual(held.map((e) => e.name).sort(), ['churn-10', 'churn-11', 'churn-9']);
  const proto = protobufCodec().decodeObject(body(await local.one(list('churn', PROTOBUF)))) as unknown as {
    items: { metadata: { name: string } }[];
  };
  assert.equal(proto.items.length, 12);
  assert.deepEqual(
    entriesOf('churn').filter((e) => e.isParsed),
    held,
    'the list neither evicted the held objects nor kept the ones it parsed',
  );
  assert.equal(parsedCount(), 3);
});

test('a wave of creates keeps the parsed objects of the last PARSED_MAX (256) only: the others die young, not in old space', async () => {
  // docs/benchmarks.md "Density memory, ninth round": a created object's parsed tree held for
  // 8,192 more writes was promoted and died in the actor's old generation, fragmenting it
  setParsedMax(PARSED_MAX);
  assert.ok(PARSED_MAX <= 256, `PARSED_MAX ${PARSED_MAX}`);
  const n = PARSED_MAX + 344;
  const names = Array.from({ length: n }, (_, i) => `wave-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < n; i += 64) {
    for (const r of (await local.shard.run(names.slice(i, i + 64).map((m) => create('wave', m)))).results) body(r);
  }
  const parsed = entriesOf('wave')
    .filter((e) => e.isParsed)
    .map((e) => e.name)
    .sort();
  assert.deepEqual(parsed, names.slice(n - PARSED_MAX), 'the written last hold theirs, the others none');
  assert.equal(parsedCount(), PARSED_MAX);
  // a read of an older one parses it again, equal to what was written
  const got = JSON.parse(body(await local.one(get('wave', names[0]!))).toString('utf8'));
  assert.equal(got.metadata.name, names[0]);
});
