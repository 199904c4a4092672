import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedPaths } from './runner.js';

test('a half-write finding names the JSON paths that changed', () => {
  assert.equal(changedPaths('{"a":{"b":[1,2]},"c":1}', '{"a":{"b":[1,3]},"d":2}'), '.a.b.1: 2 -> 3; .c: 1 -> undefined; .d: undefined -> 2');
  assert.equal(changedPaths('{"a":1}', '{"a":1}'), '(none)');
  assert.equal(changedPaths('{"a":1}', 'not json'), '(not JSON)');
});
