import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from '../../src/patch/merge-patch.js';

// RFC 7386 Appendix A: [original, patch, result]
const rfc: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

rfc.forEach(([original, patch, expected], i) => {
  test(`merge patch: RFC 7386 example ${i + 1}`, () => {
    const before = JSON.stringify(original);
    assert.deepEqual(applyMergePatch(original, patch), expected);
    assert.equal(JSON.stringify(original), before, 'the original is never mutated');
  });
});

test('merge patch: on an object, null deletes nested keys and lists are replaced whole', () => {
  const cm = { metadata: { name: 'x', labels: { a: '1', b: '2' } }, data: { k: 'v', gone: 'x' }, list: [1, 2, 3] };
  const out = applyMergePatch(cm, { metadata: { labels: { a: null, c: '3' } }, data: { gone: null }, list: [4] });
  assert.deepEqual(out, { metadata: { name: 'x', labels: { b: '2', c: '3' } }, data: { k: 'v' }, list: [4] });
});
