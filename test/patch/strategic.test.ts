import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyStrategicPatch as applyTyped } from '../../src/patch/strategic.js';

/** the patched object, read as the assertions read it */
const applyStrategicPatch = (...args: Parameters<typeof applyTyped>): any => applyTyped(...args);
import { schemaIndex } from '../../src/schema/schema.js';
import { patchObject } from '../../src/registry/patch.js';
import { StatusError } from '../../src/api/status.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;
const pod = schemaIndex().forKind('', 'v1', 'Pod')!;

function dep(containers: unknown[], extra: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 1, ...extra, template: { spec: { containers } } },
  };
}
const containersOf = (d: any) => d.spec.template.spec.containers;
const patchContainers = (containers: unknown[], more: Record<string, unknown> = {}) => ({
  spec: { template: { spec: { containers, ...more } } },
});

const a = {
  name: 'a',
  image: 'nginx:1',
  ports: [{ containerPort: 80 }, { containerPort: 443 }],
  env: [
    { name: 'X', value: '1' },
    { name: 'Y', value: '2' },
  ],
};
const b = { name: 'b', image: 'busybox:1', args: ['sleep', '1'] };

// [name, live containers, patch, expected containers]
const containerCases: [string, unknown[], unknown, unknown[]][] = [
  [
    'containers merge by name',
    [a, b],
    patchContainers([{ name: 'b', image: 'busybox:2' }]),
    [a, { ...b, image: 'busybox:2' }],
  ],
  [
    'a new container is appended',
    [a],
    patchContainers([{ name: 'c', image: 'redis' }]),
    [a, { name: 'c', image: 'redis' }],
  ],
  [
    'ports merge by containerPort',
    [a],
    patchContainers([{ name: 'a', ports: [{ containerPort: 443, name: 'https' }, { containerPort: 8080 }] }]),
    [{ ...a, ports: [{ containerPort: 80 }, { containerPort: 443, name: 'https' }, { containerPort: 8080 }] }],
  ],
  [
    'env merges by name',
    [a],
    patchContainers([
      {
        name: 'a',
        env: [
          { name: 'X', value: '9' },
          { name: 'Z', value: '3' },
        ],
      },
    ]),
    [
      {
        ...a,
        env: [
          { name: 'X', value: '9' },
          { name: 'Y', value: '2' },
          { name: 'Z', value: '3' },
        ],
      },
    ],
  ],
  ['$patch: delete removes a list item', [a, b], patchContainers([{ name: 'a', $patch: 'delete' }]), [b]],
  [
    '$patch: delete removes a nested list item',
    [a],
    patchContainers([{ name: 'a', env: [{ name: 'X', $patch: 'delete' }] }]),
    [{ ...a, env: [{ name: 'Y', value: '2' }] }],
  ],
  [
    '$patch: replace replaces the whole list',
    [a, b],
    patchContainers([{ $patch: 'replace' }, { name: 'c', image: 'redis' }]),
    [{ name: 'c', image: 'redis' }],
  ],
  [
    'null deletes a field of an item',
    [a],
    patchContainers([{ name: 'a', env: null }]),
    [{ name: a.name, image: a.image, ports: a.ports }],
  ],
  ['atomic lists (args) are replaced', [b], patchContainers([{ name: 'b', args: ['run'] }]), [{ ...b, args: ['run'] }]],
  [
    '$setElementOrder/containers reorders',
    [a, b],
    patchContainers([{ name: 'a', image: 'nginx:2' }], {
      '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
    }),
    [b, { ...a, image: 'nginx:2' }],
  ],
];

for (const [name, live, patch, expected] of containerCases) {
  test(`strategic: ${name}`, () => {
    const original = dep(live);
    const before = JSON.stringify(original);
    const out = applyStrategicPatch(original, patch, deployment);
    assert.deepEqual(containersOf(out), expected);
    assert.equal(JSON.stringify(original), before, 'the original is never mutated');
    assert.ok(!JSON.stringify(out).includes('$'), 'no directive survives in the result');
  });
}

test('strategic: $patch: replace on a map replaces it', () => {
  const live = { metadata: { name: 'p', labels: { a: '1', b: '2' } } };
  const out = applyStrategicPatch(live, { metadata: { labels: { $patch: 'replace', c: '3' } } }, pod);
  assert.deepEqual(out.metadata.labels, { c: '3' });
});

test('strategic: $patch: delete on a map removes it', () => {
  const live = dep([a], { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } });
  const out = applyStrategicPatch(live, { spec: { strategy: { $patch: 'delete' } } }, deployment);
  assert.equal(out.spec.strategy, undefined);
  assert.equal(out.spec.replicas, 1);
});

test('strategic: $retainKeys keeps only the listed keys (strategy type switch)', () => {
  const live = dep([a], { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } });
  const out = applyStrategicPatch(
    live,
    { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
    deployment,
  );
  assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
});

test('strategic: an object replacing a scalar keeps no directives', () => {
  const out = applyStrategicPatch(
    { spec: { strategy: 'odd' } },
    { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
    deployment,
  );
  assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
});

test('strategic: finalizers merge as a set; $deleteFromPrimitiveList/finalizers removes', () => {
  const live = { metadata: { name: 'p', finalizers: ['a/x', 'b/y'] } };
  const added = applyStrategicPatch(live, { metadata: { finalizers: ['c/z', 'a/x'] } }, pod);
  assert.deepEqual(added.metadata.finalizers, ['a/x', 'b/y', 'c/z']);
  const removed = applyStrategicPatch(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a/x'] } }, pod);
  assert.deepEqual(removed.metadata.finalizers, ['b/y']);
});

test('strategic: $setElementOrder on a primitive list', () => {
  const live = { metadata: { name: 'p', finalizers: ['a', 'b', 'c'] } };
  const out = applyStrategicPatch(live, { metadata: { '$setElementOrder/finalizers': ['c', 'a', 'b'] } }, pod);
  assert.deepEqual(out.metadata.finalizers, ['c', 'a', 'b']);
});

// [name, patch]: malformed strategic patches are 400
const bad: [string, unknown][] = [
  ['unknown $patch directive', { metadata: { labels: { $patch: 'explode' } } }],
  ['merged list item without its merge key', patchContainers([{ image: 'x' }])],
  ['$patch: delete without the merge key', patchContainers([{ $patch: 'delete' }])],
  ['$patch: merge inside a list', patchContainers([{ $patch: 'merge' }])],
  ['a patch that is not an object', [1, 2]],
];
for (const [name, patch] of bad) {
  test(`strategic: ${name} is 400`, () => {
    assert.throws(
      () => applyStrategicPatch(dep([a]), patch, deployment),
      (e: unknown) => e instanceof StatusError && e.code === 400,
    );
  });
}

test('strategic: a resource without a schema is 415', () => {
  const input = { patchType: 'strategic' as const, text: '{"spec":{}}', force: false, fieldManager: 'm' };
  const target = { kind: 'Widget', group: 'example.com', apiVersion: 'example.com/v1', name: 'w' };
  assert.throws(
    () => patchObject({ metadata: { name: 'w' } }, input, undefined, target, '2024-01-01T00:00:00Z'),
    (e: unknown) => e instanceof StatusError && e.code === 415 && e.status.reason === 'UnsupportedMediaType',
  );
});

test('patch options: force on a non-apply patch and a missing apply fieldManager are 422', () => {
  const target = { kind: 'ConfigMap', group: '', apiVersion: 'v1', name: 'c' };
  const cases = [
    { patchType: 'merge' as const, text: '{}', force: true, fieldManager: 'm' },
    {
      patchType: 'apply' as const,
      text: '{"apiVersion":"v1","kind":"ConfigMap"}',
      force: false,
      fieldManager: undefined,
    },
    { patchType: 'merge' as const, text: '{}', force: false, fieldManager: 'm'.repeat(129) },
  ];
  for (const input of cases) {
    assert.throws(
      () => patchObject({ metadata: { name: 'c' } }, input, undefined, target, '2024-01-01T00:00:00Z'),
      (e: unknown) => e instanceof StatusError && e.code === 422 && e.status.details?.kind === 'PatchOptions',
      input.patchType,
    );
  }
});
