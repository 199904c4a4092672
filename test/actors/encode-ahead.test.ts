/**
 * The actor's idle hook for Protobuf bytes encoded ahead (src/actors/encode-ahead.ts): a batch's
 * poke runs one step at the event loop's check phase, not in the batch's own turn, and pokes
 * before it runs are one step; each step looks at every collection's queue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EncodeAhead, RATE } from '../../src/actors/encode-ahead.js';
import { AHEAD_CHUNK, aheadStats } from '../../src/codec/protobuf/encode-ahead.js';
import type { TypeCache } from '../../src/storage/cacher/type-cache.js';

test('pokes run one step at the next check phase, over every collection', async () => {
  let looked = 0;
  const cache = {
    aheadSource: () => {
      looked++;
      return undefined;
    },
  } as unknown as TypeCache;
  const hook = new EncodeAhead(() => [cache, cache]);
  hook.poke();
  hook.poke();
  assert.equal(hook.steps, 0, 'not in the batch’s turn');
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 1, 'one step for both pokes');
  assert.equal(looked, 2);
  hook.poke();
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 2);
});

test('steps wait for a chunk of budget, refilled at RATE per second, and are charged what they sent', async () => {
  const t0 = performance.now();
  const cache = {
    aheadSource: () => {
      // a step that sends two chunks (what encodeAhead does with both slots free)
      aheadStats.sent += 2 * AHEAD_CHUNK;
      return undefined;
    },
  } as unknown as TypeCache;
  const hook = new EncodeAhead(() => [cache]);
  hook.poke(t0);
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 1, 'the budget starts with two chunks');
  // the step spent both chunks: the next one waits until a chunk has been refilled
  const chunkMs = (1000 * AHEAD_CHUNK) / RATE;
  hook.poke(t0 + chunkMs / 2);
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 1, 'half a chunk refilled: no step');
  hook.poke(t0 + chunkMs + 1);
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 2, 'a chunk refilled: a step');
  hook.poke(t0 + chunkMs + 2);
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 2, 'charged again: no step until the next chunk');
  // a long quiet spell refills two chunks at most
  hook.poke(t0 + 100 * chunkMs);
  await new Promise((r) => setImmediate(r));
  hook.poke(t0 + 100 * chunkMs + 1);
  await new Promise((r) => setImmediate(r));
  assert.equal(hook.steps, 3, 'capped at two chunks: one step spends it');
});
