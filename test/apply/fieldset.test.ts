import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSet, fieldsOf, pathString, removeAt, SEP, valueAt, type Path } from '../../src/apply/fieldset.js';
import { compare } from '../../src/apply/compare.js';
import { schemaIndex } from '../../src/schema/schema.js';

const pod = schemaIndex().forKind('', 'v1', 'Pod')!;
const configMap = schemaIndex().forKind('', 'v1', 'ConfigMap')!;
const S = (...paths: string[]) => FieldSet.of(paths.map((p) => p.split('/')));
const sorted = (s: FieldSet) =>
  s
    .paths()
    .map((p) => p.join('/'))
    .sort();

// [name, operation, expected paths]
const algebra: [string, () => FieldSet, string[]][] = [
  ['union', () => S('f:a', 'f:b').union(S('f:b', 'f:c')), ['f:a', 'f:b', 'f:c']],
  ['difference', () => S('f:a', 'f:b').difference(S('f:b', 'f:c')), ['f:a']],
  ['intersection', () => S('f:a', 'f:b').intersection(S('f:b', 'f:c')), ['f:b']],
  ['union with the empty set', () => S('f:a').union(new FieldSet()), ['f:a']],
  ['descendantsOf', () => S('f:a/f:b', 'f:a', 'f:c/f:d').descendantsOf(S('f:a')), ['f:a/f:b']],
  ['ancestorsOf', () => S('f:a', 'f:a/f:b', 'f:c').ancestorsOf(S('f:a/f:b/f:x')), ['f:a', 'f:a/f:b']],
];
for (const [name, op, expected] of algebra) {
  test(`FieldSet ${name}`, () => assert.deepEqual(sorted(op()), expected));
}

test('FieldSet intersection and descendantsOf: the members of a plain filter, in its order, small and large operands', () => {
  const members = (s: FieldSet) => s.paths().map((p) => p.join('/'));
  const big = S(...Array.from({ length: 60 }, (_, i) => `f:spec/f:c${i % 7}/f:x${i}`), 'f:spec/f:r', 'f:spec');
  const cases = [
    S('f:spec/f:r'),
    S('f:spec/f:nothing'),
    S('f:spec/f:c3/f:x3', 'f:spec/f:c1'),
    S('f:spec'),
    new FieldSet(),
    S(...Array.from({ length: 20 }, (_, i) => `f:spec/f:c${i % 9}`)),
    big,
  ];
  for (const o of cases) {
    const om = members(o);
    const plain = members(big).filter((x) => om.includes(x));
    assert.deepEqual(members(big.intersection(o)), plain);
    assert.deepEqual(
      members(o.intersection(big)),
      om.filter((x) => members(big).includes(x)),
    );
    const below = members(big).filter((x) => om.some((m) => x.startsWith(`${m}/`)));
    assert.deepEqual(members(big.descendantsOf(o)), below);
  }
});

test('FieldSet descendantsOf asked again of one set: the same answers, and a member added since is found', () => {
  const members = (s: FieldSet) => s.paths().map((p) => p.join('/'));
  const big = S(...Array.from({ length: 40 }, (_, i) => `f:spec/f:c${i % 5}/f:x${i}`));
  // from the second query on, the set keeps its members' ancestors
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(members(big.descendantsOf(S('f:spec/f:r'))), []);
    assert.deepEqual(members(big.descendantsOf(S('f:spec/f:c1/f:x1'))), []);
    assert.equal(big.descendantsOf(S('f:spec/f:c2')).size, 8);
  }
  big.addKey(['f:spec', 'f:r', 'f:inside'].join(SEP));
  assert.deepEqual(members(big.descendantsOf(S('f:spec/f:r'))), ['f:spec/f:r/f:inside']);
  big.add(['f:spec', 'f:c1', 'f:x1', 'f:deeper']);
  assert.deepEqual(members(big.descendantsOf(S('f:spec/f:c1/f:x1'))), ['f:spec/f:c1/f:x1/f:deeper']);
});

test('FieldSet equals, has, size, and the empty path is never a member', () => {
  const s = S('f:a', 'f:b/f:c');
  assert.ok(s.equals(S('f:b/f:c', 'f:a')));
  assert.ok(!s.equals(S('f:a')));
  assert.ok(s.has(['f:b', 'f:c']) && !s.has(['f:b']));
  s.add([]);
  assert.equal(s.size, 2);
  assert.ok(new FieldSet().empty());
});

test('fieldsV1: f: keys, {} leaves, "." for members with children, k: items, upstream order', () => {
  const s = S(
    'f:data/f:x',
    'f:spec/f:containers/k:{"name":"c"}',
    'f:spec/f:containers/k:{"name":"c"}/f:image',
    'f:spec/f:ports/k:{"port":8080}',
    'f:spec/f:ports/k:{"port":443}',
    'f:spec/f:ports/k:{"port":80}',
    'f:spec/f:ports',
  );
  const v1 = s.toFieldsV1();
  assert.deepEqual(v1, {
    'f:data': { 'f:x': {} },
    'f:spec': {
      'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } },
      'f:ports': { '.': {}, 'k:{"port":8080}': {}, 'k:{"port":443}': {}, 'k:{"port":80}': {} },
    },
  });
  assert.deepEqual(
    Object.keys(v1['f:spec']['f:ports']),
    ['.', 'k:{"port":80}', 'k:{"port":443}', 'k:{"port":8080}'],
    'keys compare by value',
  );
  assert.ok(FieldSet.fromFieldsV1(v1).equals(s), 'fieldsV1 round-trips');
});

// [name, schema, applied object, expected apply set]
const applySets: [string, any, unknown, string[]][] = [
  ['map entries are members, the struct field holding the map is not', configMap, { data: { x: '1' } }, ['f:data/f:x']],
  ['labels', configMap, { metadata: { labels: { app: 'a' } } }, ['f:metadata/f:labels/f:app']],
  ['an empty map and a null are members', configMap, { data: {}, binaryData: null }, ['f:binaryData', 'f:data']],
  ['unknown fields are not owned', configMap, { data: { x: '1' }, bogus: { y: 1 } }, ['f:data/f:x']],
  [
    'list-map items by key, with a "." member',
    pod,
    { spec: { containers: [{ name: 'c', image: 'i' }] } },
    [
      'f:spec/f:containers/k:{"name":"c"}',
      'f:spec/f:containers/k:{"name":"c"}/f:image',
      'f:spec/f:containers/k:{"name":"c"}/f:name',
    ],
  ],
  [
    'multi-key items sort their keys',
    pod,
    { spec: { containers: [{ name: 'c', ports: [{ protocol: 'TCP', containerPort: 80 }] }] } },
    [
      'f:spec/f:containers/k:{"name":"c"}',
      'f:spec/f:containers/k:{"name":"c"}/f:name',
      'f:spec/f:containers/k:{"name":"c"}/f:ports/k:{"containerPort":80,"protocol":"TCP"}',
      'f:spec/f:containers/k:{"name":"c"}/f:ports/k:{"containerPort":80,"protocol":"TCP"}/f:containerPort',
      'f:spec/f:containers/k:{"name":"c"}/f:ports/k:{"containerPort":80,"protocol":"TCP"}/f:protocol',
    ],
  ],
  [
    'set items as v: values',
    pod,
    { metadata: { finalizers: ['a/b', 'c'] } },
    ['f:metadata/f:finalizers/v:"a/b"', 'f:metadata/f:finalizers/v:"c"'],
  ],
  ['atomic lists are one leaf', pod, { spec: { tolerations: [{ key: 'k' }] } }, ['f:spec/f:tolerations']],
  [
    'atomic structs are one leaf',
    schemaIndex().forKind('apps', 'v1', 'Deployment'),
    { spec: { selector: { matchLabels: { a: 'b' } } } },
    ['f:spec/f:selector'],
  ],
];
for (const [name, schema, obj, expected] of applySets) {
  test(`apply set: ${name}`, () => assert.deepEqual(sorted(fieldsOf(obj, schema)), expected));
}

// [name, before, after, added, modified, removed]
const comparisons: [string, unknown, unknown, string[], string[], string[]][] = [
  [
    'a new map gets a "." member, a changed leaf is modified',
    { data: { x: '1' } },
    { data: { x: '2' } },
    [],
    ['f:data/f:x'],
    [],
  ],
  ['added map', {}, { data: { x: '1' } }, ['f:data', 'f:data/f:x'], [], []],
  ['removed entry', { data: { x: '1', y: '2' } }, { data: { x: '1' } }, [], [], ['f:data/f:y']],
  [
    'added container: item member, required list not a member, struct not a member',
    { spec: { containers: [] } },
    { spec: { containers: [{ name: 'c', resources: {}, ports: [{ containerPort: 1 }] }] } },
    [
      'f:spec/f:containers/k:{"name":"c"}',
      'f:spec/f:containers/k:{"name":"c"}/f:name',
      'f:spec/f:containers/k:{"name":"c"}/f:ports',
      'f:spec/f:containers/k:{"name":"c"}/f:ports/k:{"containerPort":1,"protocol":"TCP"}',
      'f:spec/f:containers/k:{"name":"c"}/f:ports/k:{"containerPort":1,"protocol":"TCP"}/f:containerPort',
      'f:spec/f:containers/k:{"name":"c"}/f:resources',
    ],
    [],
    [],
  ],
  [
    'removed container removes every path under it',
    { spec: { containers: [{ name: 'c', image: 'i' }] } },
    { spec: { containers: [] } },
    [],
    [],
    [
      'f:spec/f:containers/k:{"name":"c"}',
      'f:spec/f:containers/k:{"name":"c"}/f:image',
      'f:spec/f:containers/k:{"name":"c"}/f:name',
    ],
  ],
  [
    'set element added and removed',
    { metadata: { finalizers: ['a'] } },
    { metadata: { finalizers: ['b'] } },
    ['f:metadata/f:finalizers/v:"b"'],
    [],
    ['f:metadata/f:finalizers/v:"a"'],
  ],
  [
    'atomic list change is one modified leaf',
    { spec: { tolerations: [{ key: 'a' }] } },
    { spec: { tolerations: [{ key: 'b' }] } },
    [],
    ['f:spec/f:tolerations'],
    [],
  ],
];
for (const [name, before, after, added, modified, removed] of comparisons) {
  test(`compare: ${name}`, () => {
    const schema = JSON.stringify(after).includes('data') ? configMap : pod;
    const c = compare(before, after, schema);
    assert.deepEqual([sorted(c.added), sorted(c.modified), sorted(c.removed)], [added, modified, removed]);
  });
}

test('valueAt, removeAt and pathString follow the path elements', () => {
  const obj = {
    spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b' }] },
    metadata: { finalizers: ['f1', 'f2'] },
  };
  const item: Path = ['f:spec', 'f:containers', 'k:{"name":"a"}', 'f:image'];
  assert.equal(valueAt(obj, item), 'x');
  assert.equal(valueAt(obj, ['f:spec', 'f:containers', 'i:1', 'f:name']), 'b');
  assert.equal(pathString(item), '.spec.containers[name="a"].image');
  assert.equal(
    pathString(['f:m', 'k:{"containerPort":80,"protocol":"TCP"}', 'v:"x"', 'i:2']),
    '.m[containerPort=80,protocol="TCP"][="x"][2]',
  );
  removeAt(obj, ['f:spec', 'f:containers', 'k:{"name":"a"}']);
  removeAt(obj, ['f:metadata', 'f:finalizers', 'v:"f1"']);
  assert.deepEqual(obj, { spec: { containers: [{ name: 'b' }] }, metadata: { finalizers: ['f2'] } });
});
