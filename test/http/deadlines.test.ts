/**
 * The shared deadline timer of watch streams: an entry expires once, at the first tick at or
 * after its deadline (never before), in deadline order; a removed entry never expires.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deadlines, TICK_MS } from '../../src/http/deadlines.js';

test('entries expire at their tick, in deadline order, once; removed ones never', () => {
  let now = 10_000;
  const d = new Deadlines(() => now);
  const expired: string[] = [];
  const entry = (name: string) => ({ expire: () => expired.push(name) });
  const a = entry('a'),
    b = entry('b'),
    c = entry('c');
  d.add(b, now + 2 * TICK_MS + 1);
  d.add(a, now + TICK_MS);
  d.add(c, now + 5 * TICK_MS);
  assert.equal(d.size, 3);
  now += TICK_MS - 1;
  d.tick();
  assert.deepEqual(expired, [], 'nothing before its deadline');
  now += 1;
  d.tick();
  assert.deepEqual(expired, ['a']);
  d.remove(c);
  now += 10 * TICK_MS;
  d.tick();
  d.tick();
  assert.deepEqual(expired, ['a', 'b'], 'b once (rounded up to its tick), c removed');
  assert.equal(d.size, 0);
});

test('a real interval ends a short deadline, then stops', async () => {
  const d = new Deadlines();
  // the deadline timer is unref'd (streams, not deadlines, keep a server alive): a ref'd handle
  // keeps this test's event loop running until the deadline fires
  const keepAlive = setInterval(() => {}, 1_000);
  const done = new Promise<number>((resolve) => {
    const start = performance.now();
    d.add({ expire: () => resolve(performance.now() - start) }, start + 50);
  });
  const took = await done.finally(() => clearInterval(keepAlive));
  assert.ok(took >= 50, `expired after ${took} ms`);
  assert.equal(d.size, 0);
});
