/**
 * The test runner (scripts/run-tests.mjs) sets PLAT_FREEZE_STORED=1, and then every object a
 * cache entry holds is deep-frozen, so a write into a stored object anywhere in a test's server
 * throws. Off (the production default), entries hold plain objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CachedEntry } from '../../src/storage/cacher/cached-entry.js';

const json = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', labels: { a: 'b' } } });

test('cached objects are deep-frozen exactly when PLAT_FREEZE_STORED=1 (the test runner sets it)', () => {
  const on = process.env.PLAT_FREEZE_STORED === '1';
  const parsed = new CachedEntry('', 'f', 1, json, 'v1', { a: 'b' }, {}).obj as any;
  const given = new CachedEntry('', 'g', 2, json, 'v1', { a: 'b' }, {}, JSON.parse(json)).obj as any;
  for (const obj of [parsed, given]) {
    assert.equal(Object.isFrozen(obj), on);
    assert.equal(Object.isFrozen(obj.metadata.labels), on);
    if (on)
      assert.throws(() => {
        obj.metadata.labels.a = 'c';
      }, TypeError);
  }
});
