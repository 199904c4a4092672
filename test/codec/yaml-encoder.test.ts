/**
 * The YAML encoder (src/codec/yaml-encoder.ts): the `yaml` library's output for ordinary values,
 * flow style below FLOW_DEPTH so the output stays linear in the value's size, no recursion
 * (8,000 levels encode), and resumable slices that together give the same text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { FLOW_DEPTH, YamlEncoder, toYaml } from '../../src/codec/yaml-encoder.js';

const STRINGS = [
  '',
  'a',
  'hello world',
  '123',
  'true',
  'null',
  '~',
  'yes',
  '1.5',
  '0x1F',
  'a: b',
  '- x',
  '#c',
  'x #y',
  'multi\nline',
  'multi\nline\n',
  'trail\n\n',
  ' lead',
  'trail ',
  "it's",
  'say "hi"',
  '---',
  '...',
  '%x',
  '@a',
  'tab\there',
  'ctl\u0001',
  'é ü 中文',
  '{a}',
  '[b]',
  'a,b',
  '*x',
  '&y',
  '!t',
  '|p',
  '>q',
  '?',
  '-',
  ':',
  'a:',
  'http://x.y/z',
  '2024-01-01T00:00:00Z',
  '1e3',
  '.inf',
  'long '.repeat(40),
  'word'.repeat(30),
  'x\n'.repeat(5) + 'long line '.repeat(12),
  'a\r\nb',
  'k'.repeat(1100),
];

/** deterministic pseudo-random values: nested maps and sequences of awkward scalars */
function values(count: number): unknown[] {
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = () => STRINGS[Math.floor(rnd() * STRINGS.length)]!;
  const val = (d: number): unknown => {
    const r = rnd();
    if (d > 4 || r < 0.45) {
      const t = rnd();
      return t < 0.6
        ? pick()
        : t < 0.75
          ? Math.floor(rnd() * 1e6) - 5e5
          : t < 0.8
            ? rnd() * 100
            : t < 0.9
              ? rnd() < 0.5
              : null;
    }
    if (r < 0.7) return Array.from({ length: Math.floor(rnd() * 4) }, () => val(d + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rnd() * 5); i > 0; i--) o[pick()] = val(d + 1);
    return o;
  };
  return Array.from({ length: count }, () => ({ root: val(0), list: [val(0), val(0)] }));
}

/** a managedFields-like chain: maps, with a sequence every third level */
function chain(depth: number): unknown {
  let v: unknown = {};
  for (let i = 0; i < depth; i++) v = { [`f:a${i}`]: i % 3 ? v : [v, 'x'] };
  return v;
}

test('ordinary values encode exactly as the yaml library writes them, and parse back', () => {
  for (const v of values(400)) {
    const text = toYaml(v);
    assert.equal(text, stringify(v), JSON.stringify(v).slice(0, 200));
    assert.deepEqual(parse(text), v);
  }
});

test('collections FLOW_DEPTH deep and deeper are flow (JSON) style: indentation stays bounded and the text parses back', () => {
  const v = { metadata: { managedFields: [{ fieldsV1: chain(200) }] }, data: { k: 'v\u0085' } };
  const text = toYaml(v);
  const widest = Math.max(...text.split('\n').map((l) => /^ */.exec(l)![0].length));
  assert.ok(widest <= 2 * FLOW_DEPTH + 2, `indentation ${widest}`);
  assert.match(text, /\{"f:a\d+": /);
  assert.deepEqual(parse(text), v);
});

test('output is linear in depth and encoding does not recurse (8,000 levels)', () => {
  const small = toYaml(chain(1000)).length;
  const large = toYaml(chain(8000)).length;
  // block style made 8x the depth ~64x the text; flow style keeps it ~8x
  assert.ok(large < small * 10, `${small} -> ${large}`);
});

test('a slice stops at its time and the slices together give the whole text', () => {
  const v = {
    items: Array.from({ length: 300 }, (_, i) => ({ name: `n${i}`, deep: chain(30), s: 'a b '.repeat(30) })),
  };
  const e = new YamlEncoder(v);
  let slices = 0;
  while (!e.step(performance.now() + 1)) slices++;
  assert.ok(slices > 0, 'one millisecond is not enough for the whole value');
  assert.equal(e.text(), toYaml(v));
  assert.ok(e.nodes > 300 * 30);
});
