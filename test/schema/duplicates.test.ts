/** The repeated-key scan of JSON and YAML bodies: paths, lines, what it must never miss. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDuplicates, parseJsonNoting, parseYamlNoting, type Duplicate } from '../../src/codec/duplicates.js';

const paths = (d: Duplicate[]) => d.map((x) => x.path);

test('JSON: repeated keys at any depth, with upstream paths, in document order; the last value kept', () => {
  const text = '{"metadata": {"name": "a", "name": "b"}, "spec": {"x": 1, "l": [{}, {"k": 1, "k": 2}], "x": 3}}';
  const found: Duplicate[] = [];
  assert.deepEqual(parseJsonNoting(text, found), { metadata: { name: 'b' }, spec: { x: 3, l: [{}, { k: 2 }] } });
  assert.deepEqual(paths(found), ['metadata.name', 'spec.l[1].k', 'spec.x']);
});

// [label, JSON text, repeated paths]
const rows: [string, string, string[]][] = [
  ['no repeats', '{"a": {"b": [1, {"c": "d"}]}, "e": null}', []],
  ['same key in sibling objects is no repeat', '{"a": {"k": 1}, "b": {"k": 1}, "l": [{"k": 1}, {"k": 2}]}', []],
  ['a root array (JSON patch operations)', '[{"op": "add", "path": "/a", "path": "/b"}]', ['[0].path']],
  ['escaped keys compare by value', '{"a\\u0062": 1, "ab": 2}', ['ab']],
  ['quotes, braces and colons inside strings are skipped', '{"s": "\\"}:{\\"s\\":", "s": 1}', ['s']],
  ['a string ending in an escaped backslash', '{"s": "x\\\\", "s": 2}', ['s']],
  ['whitespace before the colon', '{"a" : 1,\n "a"\n : 2}', ['a']],
  ['keys repeated in nested arrays of arrays', '{"m": [[{"x": 1, "x": 2}]]}', ['m[0][0].x']],
];
for (const [label, text, expected] of rows) {
  test(`JSON scan: ${label}`, () => {
    assert.deepEqual(paths(jsonDuplicates(text)), expected);
    const found: Duplicate[] = [];
    assert.deepEqual(parseJsonNoting(text, found), JSON.parse(text));
    assert.deepEqual(paths(found), expected, 'the cheap pre-check never hides a repeat');
  });
}

test('JSON: the line of each repeat is the line of its second occurrence', () => {
  assert.deepEqual(
    jsonDuplicates('{\n "a": 1,\n\n "a": 2\n}').map((d) => d.line),
    [4],
  );
});

test('YAML: repeated keys noted with their line; the last value kept; other errors still throw', () => {
  const found: Duplicate[] = [];
  const value = parseYamlNoting('kind: X\nmetadata:\n  name: a\n  name: b\nitems:\n- k: 1\n  k: 2\n', found);
  assert.deepEqual(value, { kind: 'X', metadata: { name: 'b' }, items: [{ k: 2 }] });
  assert.deepEqual(
    found.map((d) => [d.path, d.key, d.line]),
    [
      ['metadata.name', 'name', 4],
      ['items[0].k', 'k', 7],
    ],
  );
  assert.throws(() => parseYamlNoting('a: [1', []));
});

test('YAML text that is JSON takes the JSON path and reports the same lines', () => {
  const found: Duplicate[] = [];
  assert.deepEqual(parseYamlNoting('{\n"a": 1,\n"a": 2}', found), { a: 2 });
  assert.deepEqual(
    found.map((d) => [d.path, d.line]),
    [['a', 3]],
  );
  assert.deepEqual(parseYamlNoting('{a: 1}', []), { a: 1 }, 'flow YAML that is not JSON still parses');
});

test('a body with more repeated keys than a call takes arguments is parsed (no stack overflow)', () => {
  const found: Duplicate[] = [];
  const text = '{' + Array.from({ length: 200_000 }, () => '"a":1').join(',') + '}';
  assert.deepEqual(parseJsonNoting(text, found), { a: 1 });
  assert.equal(found.length, 199_999);
});

test('a YAML alias to an enclosing anchor is refused, not followed (fuzz finding: stack overflow → 500)', () => {
  assert.throws(() => parseYamlNoting('kind: X\ndata: &x\n  self: *x\n'), /recursive alias/);
  assert.throws(() => parseYamlNoting('a: &l [1, *l]\n'), /recursive alias/);
  // shared (non-recursive) aliases stay fine
  assert.deepEqual(parseYamlNoting('a: &v {k: 1}\nb: *v\n'), { a: { k: 1 }, b: { k: 1 } });
});
