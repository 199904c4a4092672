/**
 * FifoHolders (src/api/fifo-holders.ts): the oldest holder lets go past `max`, a holder added
 * again keeps its place, a deleted one leaves the order (and, added again, goes to the end);
 * against a plain-array model over random operations, with the queue kept bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FifoHolders } from '../../src/api/fifo-holders.js';

test('first in first out; adding a held holder keeps its place; a deleted one re-added goes last', () => {
  const released: string[] = [];
  const f = new FifoHolders<string>(3, (h) => released.push(h));
  for (const h of ['a', 'b', 'c', 'a', 'd']) f.add(h);
  assert.deepEqual(released, ['a'], "a's second add kept its first place");
  f.delete('b');
  assert.equal(f.size, 2);
  f.add('b');
  f.add('e');
  assert.deepEqual(released, ['a', 'c'], 'b, deleted and added again, is newer than c');
  f.max = 1;
  f.add('f');
  assert.deepEqual(released, ['a', 'c', 'd', 'b', 'e']);
  assert.equal(f.size, 1);
  f.max = 0;
  f.add('g');
  assert.deepEqual(released, ['a', 'c', 'd', 'b', 'e', 'f', 'g'], 'max 0: even the one added goes');
  assert.equal(f.size, 0);
});

test('random adds and deletes release what a plain-array model releases, in its order; the queue stays bounded', () => {
  let seed = 7;
  const rand = (n: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const released: number[] = [];
  const want: number[] = [];
  const f = new FifoHolders<number>(50, (h) => released.push(h));
  const model: number[] = [];
  let longest = 0;
  for (let i = 0; i < 50_000; i++) {
    const h = rand(200);
    if (rand(3) === 0) {
      f.delete(h);
      const at = model.indexOf(h);
      if (at >= 0) model.splice(at, 1);
    } else {
      f.add(h);
      if (!model.includes(h)) model.push(h);
      while (model.length > 50) want.push(model.shift()!);
    }
    assert.equal(f.size, model.length);
    longest = Math.max(longest, (f as unknown as { queue: unknown[] }).queue.length);
  }
  assert.deepEqual(released, want);
  assert.ok(want.length > 1000, 'evictions happened');
  // places after the head within 2 × size + 64, the consumed head at most half the array (or 64)
  assert.ok(longest <= 4 * 50 + 128 + 1, `the queue stayed bounded (${longest})`);
});
