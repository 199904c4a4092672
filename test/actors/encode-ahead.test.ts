/**
 * The actor's idle hook for Protobuf bytes encoded ahead (src/actors/encode-ahead.ts): a batch's
 * poke runs one step at the event loop's check phase, not in the batch's own turn, and pokes
 * before it runs are one step; each step looks at every collection's queue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EncodeAhead } from '../../src/actors/encode-ahead.js';
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
