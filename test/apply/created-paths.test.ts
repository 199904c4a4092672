/**
 * A create's comparison (src/apply/compare.ts addedPaths, used by recordUpdate when there is no
 * old object): the same paths as comparing with nothing and dropping what ownership never
 * tracks, for built-in kinds, objects without a schema, empty maps, nulls and list items.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addedPaths, compare } from '../../src/apply/compare.js';
import { recordUpdate } from '../../src/apply/managed-fields.js';
import { FieldSet } from '../../src/apply/fieldset.js';
import { schemaIndex, type SchemaNode } from '../../src/schema/schema.js';

const IGNORED_META = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
];

/** compare({}, obj) filtered by the tracking rules, written out here independently */
function expected(obj: unknown, schema: SchemaNode | undefined): string[] {
  return compare({}, obj, schema)
    .added.paths()
    .filter(
      ([first, second]) =>
        first !== 'f:apiVersion' &&
        first !== 'f:kind' &&
        first !== 'f:status' &&
        !(first === 'f:metadata' && (second === undefined || IGNORED_META.includes(second.slice(2)))),
    )
    .map((p) => p.join('/'))
    .sort();
}

const sorted = (s: FieldSet | undefined) =>
  s!
    .paths()
    .map((p) => p.join('/'))
    .sort();
const skipTop = new Set(['apiVersion', 'kind', 'status']);
const inner = { field: 'metadata', skip: new Set(IGNORED_META) };

const cases: [string, SchemaNode | undefined, Record<string, any>][] = [
  [
    'ConfigMap',
    schemaIndex().forKind('', 'v1', 'ConfigMap'),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'd',
        uid: 'u',
        labels: { a: 'b' },
        annotations: {},
        managedFields: [{ manager: 'x' }],
      },
      data: { k: 'v', e: '' },
      binaryData: {},
    },
  ],
  [
    'Pod',
    schemaIndex().forKind('', 'v1', 'Pod'),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        generateName: 'p-',
        finalizers: ['f'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: '1' }],
        creationTimestamp: 'now',
      },
      spec: {
        containers: [
          {
            name: 'a',
            image: 'i',
            ports: [{ containerPort: 80 }, { containerPort: 81, protocol: 'UDP' }],
            env: [{ name: 'E', value: '1' }],
            resources: {},
          },
        ],
        nodeSelector: {},
        tolerations: [{ key: 'k' }],
      },
      status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
    },
  ],
  [
    'Deployment with nulls',
    schemaIndex().forKind('apps', 'v1', 'Deployment'),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: null },
      spec: {
        replicas: null,
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: {}, spec: { containers: [] } },
        unknown: { x: 1 },
      },
    },
  ],
  [
    'no schema',
    undefined,
    {
      apiVersion: 'x/v1',
      kind: 'Thing',
      metadata: { name: 't', labels: { a: '1' } },
      spec: { list: [1, 2], deep: { a: { b: {} } } },
      status: { s: 1 },
    },
  ],
  [
    'empty metadata',
    schemaIndex().forKind('', 'v1', 'ConfigMap'),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: {} },
  ],
];

for (const [name, schema, obj] of cases) {
  test(`addedPaths equals the filtered comparison: ${name}`, () => {
    assert.deepEqual(sorted(addedPaths(obj, schema, skipTop, inner)), expected(obj, schema));
  });
}

test('a metadata that is no object, or an object that is no granular value, is left to the comparison', () => {
  assert.equal(addedPaths({ metadata: ['x'] }, undefined, skipTop, inner), undefined);
  assert.equal(addedPaths('text', undefined, skipTop, inner), undefined);
});

test('recordUpdate of a create records exactly those paths', () => {
  const [, schema, obj] = cases[1]!;
  const next = structuredClone(obj);
  recordUpdate(next, undefined, schema, 'm', 'v1', '2026-01-01T00:00:00Z');
  assert.deepEqual(sorted(FieldSet.fromFieldsV1(next.metadata.managedFields[0].fieldsV1)), expected(obj, schema));
});
