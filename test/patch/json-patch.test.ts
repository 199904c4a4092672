import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch } from '../../src/patch/json-patch.js';
import { StatusError } from '../../src/api/status.js';

// RFC 6902 Appendix A: [name, document, patch, expected result or 'error']
const rfc: [string, unknown, unknown[], unknown][] = [
  [
    'A.1 adding an object member',
    { foo: 'bar' },
    [{ op: 'add', path: '/baz', value: 'qux' }],
    { baz: 'qux', foo: 'bar' },
  ],
  [
    'A.2 adding an array element',
    { foo: ['bar', 'baz'] },
    [{ op: 'add', path: '/foo/1', value: 'qux' }],
    { foo: ['bar', 'qux', 'baz'] },
  ],
  ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
  [
    'A.4 removing an array element',
    { foo: ['bar', 'qux', 'baz'] },
    [{ op: 'remove', path: '/foo/1' }],
    { foo: ['bar', 'baz'] },
  ],
  [
    'A.5 replacing a value',
    { baz: 'qux', foo: 'bar' },
    [{ op: 'replace', path: '/baz', value: 'boo' }],
    { baz: 'boo', foo: 'bar' },
  ],
  [
    'A.6 moving a value',
    { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
    [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
    { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
  ],
  [
    'A.7 moving an array element',
    { foo: ['all', 'grass', 'cows', 'eat'] },
    [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
    { foo: ['all', 'cows', 'eat', 'grass'] },
  ],
  [
    'A.8 testing a value: success',
    { baz: 'qux', foo: ['a', 2, 'c'] },
    [
      { op: 'test', path: '/baz', value: 'qux' },
      { op: 'test', path: '/foo/1', value: 2 },
    ],
    { baz: 'qux', foo: ['a', 2, 'c'] },
  ],
  ['A.9 testing a value: error', { baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }], 'error'],
  [
    'A.10 adding a nested member object',
    { foo: 'bar' },
    [{ op: 'add', path: '/child', value: { grandchild: {} } }],
    { foo: 'bar', child: { grandchild: {} } },
  ],
  [
    'A.11 ignoring unrecognized elements',
    { foo: 'bar' },
    [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
    { foo: 'bar', baz: 'qux' },
  ],
  ['A.12 adding to a nonexistent target', { foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }], 'error'],
  ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
  ['A.15 comparing strings and numbers', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }], 'error'],
  [
    'A.16 adding an array value',
    { foo: ['bar'] },
    [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
    { foo: ['bar', ['abc', 'def']] },
  ],
];

// further cases: [name, document, patch, expected result or 'error']
const more: [string, unknown, unknown[], unknown][] = [
  ['copy', { a: { b: 1 } }, [{ op: 'copy', from: '/a', path: '/c' }], { a: { b: 1 }, c: { b: 1 } }],
  [
    'copy is deep',
    { a: { b: 1 } },
    [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'replace', path: '/c/b', value: 2 },
    ],
    { a: { b: 1 }, c: { b: 2 } },
  ],
  [
    'test on objects ignores key order',
    { a: { x: 1, y: 2 } },
    [{ op: 'test', path: '/a', value: { y: 2, x: 1 } }],
    { a: { x: 1, y: 2 } },
  ],
  ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }], { b: 2 }],
  ['add with a / in the key', {}, [{ op: 'add', path: '/a~1b', value: 1 }], { 'a/b': 1 }],
  ['remove a missing member', { a: 1 }, [{ op: 'remove', path: '/b' }], 'error'],
  ['replace a missing member', { a: 1 }, [{ op: 'replace', path: '/b', value: 1 }], 'error'],
  ['array index past the end', { a: [1] }, [{ op: 'add', path: '/a/2', value: 1 }], 'error'],
  ['leading zero index', { a: [1, 2] }, [{ op: 'remove', path: '/a/01' }], 'error'],
  ['"-" is only for add', { a: [1] }, [{ op: 'remove', path: '/a/-' }], 'error'],
  ['pointer without leading slash', { a: 1 }, [{ op: 'remove', path: 'a' }], 'error'],
  ['move into its own child', { a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/c' }], 'error'],
  ['add without value', { a: 1 }, [{ op: 'add', path: '/b' }], 'error'],
  ['unknown op', { a: 1 }, [{ op: 'frobnicate', path: '/a' }], 'error'],
  [
    'a later failure undoes earlier ops',
    { a: 1 },
    [
      { op: 'replace', path: '/a', value: 2 },
      { op: 'test', path: '/a', value: 3 },
    ],
    'error',
  ],
];

for (const [name, doc, patch, expected] of [...rfc, ...more]) {
  test(`json patch: ${name}`, () => {
    const before = JSON.stringify(doc);
    if (expected === 'error') {
      assert.throws(
        () => applyJsonPatch(doc, patch),
        (e: unknown) => e instanceof StatusError && e.code === 422 && e.status.reason === 'Invalid',
      );
    } else {
      assert.deepEqual(applyJsonPatch(doc, patch), expected);
    }
    assert.equal(JSON.stringify(doc), before, 'the input document is never mutated');
  });
}

test('json patch: a body that is not an array is 400', () => {
  assert.throws(
    () => applyJsonPatch({}, { op: 'add' }),
    (e: unknown) => e instanceof StatusError && e.code === 400,
  );
});
