/**
 * The type cache's queue of entries for Protobuf encoding in idle time
 * (src/codec/protobuf/encode-ahead.ts): none below WARM_AT entries; from then on every entry
 * once, then each entry written; `current` tells the newest state from a replaced or deleted one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WARM_AT } from '../../src/codec/codec.js';
import { type Entry, TypeCache } from '../../src/storage/cacher/type-cache.js';

function entry(name: string, rv: number, data = 'v'): Entry {
  const obj = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { namespace: 'ns', name, resourceVersion: String(rv) },
    data,
  };
  return { namespace: 'ns', name, rv, obj, json: JSON.stringify(obj), apiVersion: 'v1', labels: undefined, fields: {} };
}

test('a collection reaching WARM_AT queues every entry once, then each write; current() is the newest state', () => {
  const c = new TypeCache(60_000);
  for (let i = 0; i < WARM_AT - 1; i++) c.load(entry(`c-${i}`, 1));
  assert.equal(c.aheadSource(), undefined, 'nothing queued below WARM_AT');
  c.apply('ADDED', entry('last', 2), Date.now());
  const source = c.aheadSource()!;
  assert.ok(source);
  const seen = new Set<string>();
  for (let e = source.next() as Entry | undefined; e; e = source.next() as Entry | undefined) {
    assert.ok(!seen.has(e.name), `${e.name} once`);
    seen.add(e.name);
  }
  assert.equal(seen.size, WARM_AT);
  assert.equal(source.next(), undefined);
  const old = c.get('ns', 'c-5')!;
  const replaced = entry('c-5', 3, 'w');
  c.apply('MODIFIED', replaced, Date.now());
  const added = entry('new', 4);
  c.apply('ADDED', added, Date.now());
  assert.equal(source.next(), replaced);
  assert.equal(source.next(), added);
  assert.equal(source.next(), undefined);
  assert.equal(source.current(old), false, 'a replaced state');
  assert.equal(source.current(replaced), true);
  c.apply('DELETED', added, Date.now());
  assert.equal(source.current(added), false, 'a deleted object');
});

test('a queue far longer than the collection (writes outpacing the helper) restarts from the entries held', () => {
  const c = new TypeCache(60_000, 1000);
  for (let i = 0; i < WARM_AT; i++) c.load(entry(`c-${i}`, 1));
  const source = c.aheadSource()!;
  // the same few objects rewritten many times: the queue would hold every state
  for (let round = 0; round < 3; round++)
    for (let i = 0; i < WARM_AT; i++) c.apply('MODIFIED', entry(`c-${i % 100}`, 10 + round * WARM_AT + i), Date.now());
  let n = 0;
  while (source.next()) n++;
  assert.ok(n <= WARM_AT, `${n} entries looked at after the restart, at most the ${WARM_AT} held`);
});
