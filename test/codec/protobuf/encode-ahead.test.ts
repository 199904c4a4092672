/**
 * Protobuf item bytes encoded ahead of a large collection's first list, by a helper thread at the
 * lowest priority (src/codec/protobuf/encode-ahead.ts): its thread runs at nice 19; the bytes it
 * keeps are byte for byte those a list encodes, and a list finds them kept; an entry replaced
 * before its answer keeps nothing, and a write after the encoding lists its new bytes; a helper
 * that dies with a chunk out hangs nothing, and the list encodes those entries itself.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEntries, encodeEntry } from '../../../src/codec/codec.js';
import {
  AHEAD_CHUNK,
  AHEAD_NICE,
  type AheadSource,
  aheadAnswered,
  aheadFaults,
  aheadOut,
  aheadReady,
  aheadStats,
  aheadTuning,
  encodeAhead,
  stopAhead,
} from '../../../src/codec/protobuf/encode-ahead.js';
import { inSlab } from '../../../src/codec/item-slabs.js';
import { CachedEntry } from '../../../src/storage/cacher/cached-entry.js';
import type { Stored } from '../../../src/api/object.js';
import type { Encoding } from '../../../src/codec/types.js';

const PROTOBUF = { format: 'protobuf' } as Encoding;
const KEY = 'protobuf|v1';
const HEAD = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '9' } };
const N = 4 * AHEAD_CHUNK + 37;
const ODD = ['ü-é', 'x\ud800y', '\u{1F600}', '"quoted\\"', 'plain'];

function pod(i: number, image = `img:${i}`): Stored {
  const odd = i % 50 === 7 ? ODD[Math.floor(i / 50) % 5]! : 'plain';
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
    },
    spec: { containers: [{ name: 'c', image, args: [odd, String(i)] }], nodeName: `n-${i % 50}` },
  } as unknown as Stored;
}

const entryOf = (o: Stored): CachedEntry =>
  new CachedEntry(o.metadata.namespace!, o.metadata.name, 1, JSON.stringify(o), 'v1', undefined, {});

/** Each entry encoded alone on this thread, then the list from the kept bytes. */
function reference(objects: Stored[]): { items: Buffer[]; body: Buffer } {
  const es = objects.map(entryOf);
  for (const e of es) encodeEntry(e, PROTOBUF, 'v1', 'Pod');
  return { items: es.map((e) => Buffer.from(e.encoded![KEY]!)), body: Buffer.from(encodeEntries(HEAD, es, PROTOBUF)) };
}

/** A collection as a type cache queues it: name -> newest entry, and the queue. */
class Collection implements AheadSource {
  readonly byName = new Map<string, CachedEntry>();
  private readonly queue: CachedEntry[] = [];
  constructor(objects: Stored[]) {
    for (const o of objects) this.write(o);
  }
  write(o: Stored): CachedEntry {
    const e = entryOf(o);
    this.byName.set(e.name, e);
    this.queue.push(e);
    return e;
  }
  next(): CachedEntry | undefined {
    return this.queue.shift();
  }
  current(e: CachedEntry): boolean {
    return this.byName.get(e.name) === e;
  }
  get waiting(): number {
    return this.queue.length;
  }
  list(): Buffer {
    return Buffer.from(encodeEntries(HEAD, [...this.byName.values()], PROTOBUF));
  }
}

/** Steps until nothing is out or waiting; each wait is for the helper's next answer (bounded). */
async function drain(c: Collection): Promise<void> {
  for (let i = 0; i < 1000 && (encodeAhead(c) || c.waiting > 0); i++) await aheadAnswered();
}

const objects = Array.from({ length: N }, (_, i) => pod(i));
const ref = reference(objects);
// whatever the machine's load (the gate on idle CPU has a test of its own)
aheadTuning.idleShare = 0;

after(async () => {
  delete aheadFaults.exitAt;
  await stopAhead();
});

test('the helper thread runs at the lowest priority (nice 19)', async () => {
  aheadTuning.nice = AHEAD_NICE;
  const c = new Collection([]);
  encodeAhead(c);
  await aheadReady();
  if (process.platform === 'linux') assert.equal(aheadStats.nice, 19);
  assert.equal(AHEAD_NICE, 19);
  await stopAhead();
});

test('entries encoded ahead keep the bytes a list encodes, and the list reads them kept', async () => {
  // the bytes are the same at any priority; nice 19 on a loaded machine would leave the test to the idle CPU
  aheadTuning.nice = 0;
  const c = new Collection(objects);
  const kept = aheadStats.kept;
  encodeAhead(c);
  await aheadReady();
  await drain(c);
  assert.equal(aheadOut(), 0);
  const es = [...c.byName.values()];
  // the texts with a lone surrogate are left to the list (the helper reads UTF-8 bytes)
  const lone = objects.filter((o) => JSON.stringify(o).includes('\\ud800')).length;
  assert.ok(lone > 0);
  assert.equal(aheadStats.kept - kept, N - lone);
  es.forEach((e, i) => {
    if (e.json.includes('\\ud800')) return assert.equal(e.encoded?.[KEY], undefined, `item ${i} left to the list`);
    assert.ok(inSlab(e.encoded![KEY]!), `item ${i} kept in a slab`);
    assert.ok(e.encoded![KEY]!.buffer instanceof SharedArrayBuffer, `item ${i} in shared memory`);
    assert.deepEqual(Buffer.from(e.encoded![KEY]!), ref.items[i], `item ${i}`);
  });
  const views = es.map((e) => e.encoded?.[KEY]);
  assert.deepEqual(c.list(), ref.body);
  es.forEach((e, i) => {
    if (views[i]) assert.equal(e.encoded![KEY], views[i], `item ${i}: the list used the kept bytes`);
  });
});

test('an entry replaced before its answer keeps nothing; a write after the encoding lists its new bytes', async () => {
  aheadTuning.nice = 0;
  encodeAhead(new Collection([])); // the helper started and ready before the collection's first step
  await aheadReady();
  const c = new Collection(objects);
  encodeAhead(c); // two chunks out: entries 0..2*AHEAD_CHUNK-1, no answer taken yet
  assert.equal(aheadOut(), 2);
  const early = c.byName.get('p-3')!;
  const changed = objects.slice();
  changed[3] = pod(3, 'img:replaced-early');
  c.write(changed[3]!);
  const dropped = aheadStats.dropped;
  await drain(c);
  assert.equal(early.encoded?.[KEY], undefined, 'the replaced state kept no bytes');
  assert.ok(aheadStats.dropped > dropped);
  // written after its first state was encoded ahead
  assert.ok(c.byName.get('p-10')!.encoded?.[KEY]);
  changed[10] = pod(10, 'img:replaced-late');
  c.write(changed[10]!);
  // the new state waits in the queue; the list comes first
  assert.deepEqual(c.list(), reference(changed).body);
  await drain(c);
  assert.deepEqual(c.list(), reference(changed).body);
});

test('with no idle CPU (a share no machine reaches) nothing is sent and no helper starts', async () => {
  await stopAhead();
  aheadTuning.idleShare = 1.01;
  const started = aheadStats.started;
  const c = new Collection(objects.slice(0, 10));
  const checks = aheadStats.idleChecks;
  assert.equal(encodeAhead(c), false);
  assert.equal(aheadStats.started, started);
  assert.equal(c.waiting, 10, 'the entries wait in their queue for the list');
  assert.ok(aheadStats.idleChecks >= checks);
  aheadTuning.idleShare = 0;
  encodeAhead(c);
  await aheadReady();
  await drain(c);
  assert.equal(c.waiting, 0);
  for (const e of c.byName.values()) assert.ok(e.encoded?.[KEY], 'sent once the gate opens');
});

test('a helper that dies with a chunk out: no hang, nothing kept from it, the list encodes those entries', async () => {
  await stopAhead();
  aheadTuning.nice = 0;
  aheadFaults.exitAt = 1; // exits on receiving its first chunk
  const lost = aheadStats.lost;
  const c = new Collection(objects);
  encodeAhead(c);
  await aheadReady();
  assert.equal(encodeAhead(c), true, 'chunks out');
  await aheadAnswered(); // the thread's end counts as an answer
  assert.equal(encodeAhead(c), false, 'the ended helper is dropped, not waited for');
  assert.equal(aheadOut(), 0);
  assert.ok(aheadStats.lost > lost);
  for (const e of c.byName.values()) assert.equal(e.encoded?.[KEY], undefined);
  assert.equal(encodeAhead(c), false, 'no helper is started again');
  assert.deepEqual(c.list(), ref.body);
  delete aheadFaults.exitAt;
  await stopAhead();
});
