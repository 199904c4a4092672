/** YAML → JSON data model as goyaml v2 (sigs.k8s.io/yaml) builds it: merge keys, repeats, aliases, linear time. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseYamlNoting, type Duplicate } from '../../src/codec/duplicates.js';

test('merge keys: merged values replace keys before the <<, keys after it win, earlier sources win', () => {
  const doc =
    'base: &b {x: 1, y: 1}\nbefore:\n  x: 0\n  <<: *b\nafter:\n  <<: *b\n  y: 2\nlist:\n  <<: [{p: 1}, {p: 2, q: 2}]\ninline:\n  <<: {z: 3}\n';
  assert.deepEqual(parseYamlNoting(doc), {
    base: { x: 1, y: 1 },
    before: { x: 1, y: 1 },
    after: { x: 1, y: 2 },
    list: { p: 1, q: 2 },
    inline: { z: 3 },
  });
});

test('merge keys: a quoted "<<" is an ordinary key; a scalar or a list of scalars is refused', () => {
  assert.deepEqual(parseYamlNoting("a: {'<<': 1}\n"), { a: { '<<': 1 } });
  assert.throws(() => parseYamlNoting('a: {<<: 1}\n'), /map merge requires map or sequence of maps as the value/);
  assert.throws(() => parseYamlNoting('a:\n  <<: [1]\n'), /map merge requires map or sequence of maps as the value/);
  assert.throws(() => parseYamlNoting('a: &a\n  <<: *a\n'), /recursive alias/);
});

test('repeats: noted per mapping with path and line, last value kept; keys merged in are no repeat', () => {
  const found: Duplicate[] = [];
  const v = parseYamlNoting('m: &m {k: 1}\nn:\n  <<: *m\n  k: 2\n  j: 1\n  j: 3\n', found);
  assert.deepEqual(v, { m: { k: 1 }, n: { k: 2, j: 3 } });
  assert.deepEqual(
    found.map((d) => [d.path, d.line]),
    [['n.j', 6]],
  );
});

test('aliases: shared values expand; a billion laughs is "excessive aliasing"', () => {
  assert.deepEqual(parseYamlNoting('a: &a [1, 2]\nb: [*a, *a]\n'), {
    a: [1, 2],
    b: [
      [1, 2],
      [1, 2],
    ],
  });
  let doc = 'x0: &x0 [1,1,1,1,1,1,1,1,1,1]\n';
  for (let i = 1; i < 9; i++)
    doc += `x${i}: &x${i} [${Array(10)
      .fill(`*x${i - 1}`)
      .join(',')}]\n`;
  assert.throws(() => parseYamlNoting(doc), /excessive aliasing/);
});

test('many flow keys, distinct or repeated, decode in linear time (the uniqueKeys check was quadratic)', () => {
  const time = (n: number, key: (i: number) => string): number => {
    const text = `m: {${Array.from({ length: n }, (_, i) => `${key(i)}: v`).join(', ')}}\n`;
    const found: Duplicate[] = [];
    const cpu = process.cpuUsage();
    parseYamlNoting(text, found);
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1000;
  };
  time(2000, (i) => `k${i}`); // warm up
  for (const key of [(i: number) => `k${i}`, () => 'a']) {
    const small = time(5000, key);
    const large = time(40_000, key);
    // linear: ~8x; the quadratic check was ~60x
    assert.ok(large < Math.max(small * 20, 1500), `5,000 keys ${small} ms of CPU, 40,000 keys ${large} ms`);
  }
});
