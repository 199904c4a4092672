/**
 * checkBracketDepth: the nesting limit counts `[`/`{` outside strings only, whatever the
 * strings hold (escaped quotes, brackets, runs of backslashes), and the count-first shortcut
 * never lets a deep text through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkBracketDepth, DepthError, exceedsDepth, MAX_NESTING_DEPTH } from '../../src/schema/depth.js';

const nested = (n: number, inner = '1') => '['.repeat(n) + inner + ']'.repeat(n);

test('at the limit passes, one deeper fails', () => {
  assert.doesNotThrow(() => checkBracketDepth(nested(MAX_NESTING_DEPTH)));
  assert.throws(() => checkBracketDepth(nested(MAX_NESTING_DEPTH + 1)), DepthError);
  assert.throws(() => checkBracketDepth('{"a":' + nested(MAX_NESTING_DEPTH) + '}'), DepthError);
});

test('brackets inside strings do not count, however many', () => {
  const s = JSON.stringify({ a: '['.repeat(5000), b: '{'.repeat(5000) });
  assert.equal(exceedsDepth(s), false);
  assert.equal(exceedsDepth(JSON.stringify({ a: '['.repeat(5000), b: nested(MAX_NESTING_DEPTH) })), false);
});

test('escaped quotes and backslash runs end strings where JSON does', () => {
  // the string holds \" then brackets: still inside the string
  const escaped = '{"a":"x\\"' + '['.repeat(3000) + '"}';
  assert.equal(exceedsDepth(escaped), false);
  // an even run of backslashes before a quote ends the string: the brackets after it count
  const ended = '["x\\\\",' + nested(MAX_NESTING_DEPTH) + ']';
  assert.deepEqual(JSON.parse(ended)[0], 'x\\');
  assert.equal(exceedsDepth(ended), true);
  // an odd run escapes the quote: the brackets are string content
  const odd = '["x\\\\\\"' + '['.repeat(3000) + '"]';
  assert.equal(JSON.parse(odd)[0].length, 3003);
  assert.equal(exceedsDepth(odd), false);
});

test('many brackets, shallow nesting: not deep; a deep run after many shallow ones: deep', () => {
  const shallow = '[' + Array.from({ length: 3000 }, () => '[1]').join(',') + ']';
  assert.equal(exceedsDepth(shallow), false);
  assert.equal(
    exceedsDepth('[' + Array.from({ length: 3000 }, () => '{}').join(',') + ',' + nested(MAX_NESTING_DEPTH) + ']'),
    true,
  );
});

test('an unterminated string ends the scan without error', () => {
  assert.equal(exceedsDepth('["' + '['.repeat(3000)), false);
});
