/**
 * Server-side apply as scenario tables over apply() and recordUpdate(): every row of the
 * spec's field-ownership table, each list and map type, force, sharing, removal, reset,
 * topology changes and the managedFields encoding.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, recordUpdate } from '../../src/apply/managed-fields.js';
import { FieldSet } from '../../src/apply/fieldset.js';
import { schemaIndex, type SchemaNode } from '../../src/schema/schema.js';
import { StatusError } from '../../src/api/status.js';

const configMap = schemaIndex().forKind('', 'v1', 'ConfigMap')!;
const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;

/** Owners as `manager/Operation` → paths joined by '/', sorted. */
type Owners = Record<string, string[]>;
interface Step {
  /** manager; apply when `apply` is given, otherwise an update with `update` */
  by: string;
  apply?: Record<string, unknown>;
  update?: (live: any) => any;
  force?: boolean;
  schema?: SchemaNode;
  /** expected conflicts as `manager-description field` (409, object unchanged) */
  conflicts?: string[];
  owners?: Owners;
  /** expected values: [dotted path in the object, value] */
  values?: [string, unknown][];
}
interface Scenario {
  name: string;
  schema: SchemaNode;
  steps: Step[];
}

/** A ConfigMap configuration; no data field when `data` is empty (an empty map would be a claim of its own). */
const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, any> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', ...extra },
  ...(Object.keys(data).length ? { data } : {}),
});
const dep = (spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd' },
  spec,
});
const tpl = (containers: unknown[]) => ({ template: { spec: { containers } } });
const C = (name: string) => `f:spec/f:template/f:spec/f:containers/k:{"name":"${name}"}`;

/** A granular list-map `items` keyed by `k`, or the same field atomic: for topology changes. */
const listSchema = (listType: 'map' | 'atomic'): SchemaNode => ({
  kind: 'struct',
  props: {
    apiVersion: { kind: 'scalar', scalarType: 'string' },
    kind: { kind: 'scalar', scalarType: 'string' },
    metadata: { kind: 'any' },
    items: {
      kind: 'list',
      listType,
      ...(listType === 'map' ? { mapKeys: ['k'] } : {}),
      elem: { kind: 'struct', props: { k: { kind: 'scalar' }, v: { kind: 'scalar' } } },
    },
  },
});
const widget = (items: unknown[]) => ({ apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' }, items });

const scenarios: Scenario[] = [
  {
    name: 'row 1: apply by B with a different value, no force: conflict, nothing changes',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1' }) },
      {
        by: 'b',
        apply: cm({ x: '2' }),
        conflicts: ['conflict with "a" .data.x'],
        owners: { 'a/Apply': ['f:data/f:x'] },
        values: [['data.x', '1']],
      },
    ],
  },
  {
    name: 'row 2: force=true: B owns it alone, value changed, removed from A',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      {
        by: 'b',
        apply: cm({ x: '2' }),
        force: true,
        owners: { 'a/Apply': ['f:data/f:y'], 'b/Apply': ['f:data/f:x'] },
        values: [['data.x', '2']],
      },
    ],
  },
  {
    name: 'row 3: apply by B with the same value: shared',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1' }) },
      { by: 'b', apply: cm({ x: '1' }), owners: { 'a/Apply': ['f:data/f:x'], 'b/Apply': ['f:data/f:x'] } },
    ],
  },
  {
    name: 'row 4: a shared field omitted by one owner stays with the other',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      { by: 'b', apply: cm({ x: '1' }) },
      {
        by: 'a',
        apply: cm({ y: '1' }),
        owners: { 'a/Apply': ['f:data/f:y'], 'b/Apply': ['f:data/f:x'] },
        values: [['data.x', '1']],
      },
    ],
  },
  {
    name: 'row 5: a sole-owned field omitted by its owner is removed',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      {
        by: 'a',
        apply: cm({ y: '1' }),
        owners: { 'a/Apply': ['f:data/f:y'] },
        values: [
          ['data.x', undefined],
          ['data.y', '1'],
        ],
      },
      { by: 'a', apply: cm({}), owners: {}, values: [['data', undefined]] },
    ],
  },
  {
    name: 'row 6: an update by B never conflicts and takes the fields it changes',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      {
        by: 'b',
        update: (o) => ({ ...o, data: { ...o.data, x: '2', z: '3' } }),
        owners: { 'a/Apply': ['f:data/f:y'], 'b/Update': ['f:data/f:x', 'f:data/f:z'] },
        values: [['data.x', '2']],
      },
      { by: 'a', apply: cm({ x: '1', y: '1' }), conflicts: ['conflict with "b" using v1 .data.x'] },
    ],
  },
  {
    name: 'an update that removes a field takes it from every owner',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      { by: 'b', update: (o) => ({ ...o, data: { y: '1' } }), owners: { 'a/Apply': ['f:data/f:y'] } },
    ],
  },
  {
    name: 'a field omitted by an applier but changed by an updater stays',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1' }) },
      { by: 'b', update: (o) => ({ ...o, data: { x: '2' } }) },
      { by: 'a', apply: cm({}), owners: { 'b/Update': ['f:data/f:x'] }, values: [['data.x', '2']] },
    ],
  },
  {
    name: 'conflicts with several managers are all reported',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1' }) },
      { by: 'b', apply: cm({ y: '1' }) },
      { by: 'u', update: (o) => ({ ...o, data: { ...o.data, z: '1' } }) },
      {
        by: 'c',
        apply: cm({ x: '2', y: '2', z: '2' }),
        conflicts: ['conflict with "a" .data.x', 'conflict with "b" .data.y', 'conflict with "u" using v1 .data.z'],
      },
    ],
  },
  {
    name: 'map type granular: labels are owned per key',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({}, { labels: { one: '1' } }) },
      {
        by: 'b',
        apply: cm({}, { labels: { two: '2' } }),
        owners: { 'a/Apply': ['f:metadata/f:labels/f:one'], 'b/Apply': ['f:metadata/f:labels/f:two'] },
      },
      { by: 'a', apply: cm({}), values: [['metadata.labels', { two: '2' }]] },
    ],
  },
  {
    name: 'map type atomic: the selector is one field',
    schema: deployment,
    steps: [
      {
        by: 'a',
        apply: dep({ selector: { matchLabels: { app: 'x' } } }),
        owners: { 'a/Apply': ['f:spec/f:selector'] },
      },
      {
        by: 'b',
        apply: dep({ selector: { matchLabels: { other: 'y' } } }),
        conflicts: ['conflict with "a" .spec.selector'],
      },
      {
        by: 'b',
        apply: dep({ selector: { matchLabels: { other: 'y' } } }),
        force: true,
        values: [['spec.selector', { matchLabels: { other: 'y' } }]],
      },
    ],
  },
  {
    name: 'list type map: containers are owned per item; an omitted item goes',
    schema: deployment,
    steps: [
      {
        by: 'a',
        apply: dep(
          tpl([
            { name: 'x', image: 'i1' },
            { name: 'y', image: 'i2' },
          ]),
        ),
      },
      {
        by: 'b',
        apply: dep(tpl([{ name: 'z', image: 'i3' }])),
        owners: {
          'a/Apply': [C('x'), C('x') + '/f:image', C('x') + '/f:name', C('y'), C('y') + '/f:image', C('y') + '/f:name'],
          'b/Apply': [C('z'), C('z') + '/f:image', C('z') + '/f:name'],
        },
      },
      {
        by: 'b',
        apply: dep(tpl([{ name: 'y', image: 'other' }])),
        conflicts: ['conflict with "a" .spec.template.spec.containers[name="y"].image'],
      },
      {
        by: 'a',
        apply: dep(tpl([{ name: 'y', image: 'i2' }])),
        values: [
          [
            'spec.template.spec.containers',
            [
              { name: 'y', image: 'i2' },
              { name: 'z', image: 'i3' },
            ],
          ],
        ],
      },
    ],
  },
  {
    name: 'list type map: an item another manager also claims survives its omission',
    schema: deployment,
    steps: [
      { by: 'a', apply: dep(tpl([{ name: 'x', image: 'i1' }])) },
      {
        by: 'u',
        update: (o) => {
          o.spec.template.spec.containers[0].args = ['run'];
          return o;
        },
      },
      { by: 'a', apply: dep(tpl([])), values: [['spec.template.spec.containers', [{ name: 'x', args: ['run'] }]]] },
    ],
  },
  {
    name: 'list type map: new items go where the applied list puts them',
    schema: deployment,
    steps: [
      { by: 'a', apply: dep(tpl([{ name: 'a' }, { name: 'b' }])) },
      {
        by: 'a',
        apply: dep(tpl([{ name: 'c' }, { name: 'a' }, { name: 'b' }])),
        values: [['spec.template.spec.containers', [{ name: 'c' }, { name: 'a' }, { name: 'b' }]]],
      },
    ],
  },
  {
    name: 'list type atomic: args belong to one manager as a whole',
    schema: deployment,
    steps: [
      { by: 'a', apply: dep(tpl([{ name: 'x', args: ['1', '2'] }])) },
      {
        by: 'b',
        apply: dep(tpl([{ name: 'x', args: ['1', '2', '3'] }])),
        conflicts: ['conflict with "a" .spec.template.spec.containers[name="x"].args'],
      },
    ],
  },
  {
    name: 'list type set: finalizers are owned per value',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({}, { finalizers: ['f/one'] }) },
      {
        by: 'b',
        apply: cm({}, { finalizers: ['f/two'] }),
        owners: { 'a/Apply': ['f:metadata/f:finalizers/v:"f/one"'], 'b/Apply': ['f:metadata/f:finalizers/v:"f/two"'] },
        values: [['metadata.finalizers', ['f/one', 'f/two']]],
      },
      { by: 'a', apply: cm({}), values: [['metadata.finalizers', ['f/two']]] },
    ],
  },
  {
    name: 'topology granular → atomic: an element owner owns the whole list',
    schema: listSchema('map'),
    steps: [
      { by: 'a', apply: widget([{ k: 1, v: 'a' }]) },
      {
        by: 'b',
        schema: listSchema('atomic'),
        apply: widget([{ k: 2, v: 'b' }]),
        conflicts: [
          'conflict with "a" .items[k=1]',
          'conflict with "a" .items[k=1].k',
          'conflict with "a" .items[k=1].v',
        ],
      },
    ],
  },
  {
    name: 'topology atomic → granular: the old owner keeps the top-level field only, no conflicts',
    schema: listSchema('atomic'),
    steps: [
      { by: 'a', apply: widget([{ k: 1, v: 'a' }]), owners: { 'a/Apply': ['f:items'] } },
      {
        by: 'b',
        schema: listSchema('map'),
        apply: widget([{ k: 1, v: 'b' }]),
        owners: {
          'a/Apply': ['f:items'],
          'b/Apply': ['f:items/k:{"k":1}', 'f:items/k:{"k":1}/f:k', 'f:items/k:{"k":1}/f:v'],
        },
      },
    ],
  },
  {
    name: 'reset: managedFields [{}] drops every owner; the writer owns only what it changed',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1', y: '1' }) },
      {
        by: 'u',
        update: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: [{}] }, data: { ...o.data, y: '2' } }),
        owners: { 'u/Update': ['f:data/f:y'] },
      },
      { by: 'u', update: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: [{}] } }), owners: {} },
    ],
  },
  {
    name: 'managedFields [] or absent keep the stored owners; explicit entries replace them',
    schema: configMap,
    steps: [
      { by: 'a', apply: cm({ x: '1' }) },
      {
        by: 'u',
        update: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: [] } }),
        owners: { 'a/Apply': ['f:data/f:x'] },
      },
      {
        by: 'u',
        update: (o) => ({
          ...o,
          metadata: {
            ...o.metadata,
            managedFields: [
              {
                manager: 'z',
                operation: 'Update',
                apiVersion: 'v1',
                fieldsType: 'FieldsV1',
                fieldsV1: { 'f:data': { 'f:x': {} } },
              },
            ],
          },
        }),
        owners: { 'z/Update': ['f:data/f:x'] },
      },
      {
        by: 'u',
        update: (o) => ({
          ...o,
          metadata: {
            ...o.metadata,
            managedFields: [{ manager: 'bad', operation: 'Update', fieldsV1: { 'k:{oops': {} } }],
          },
        }),
        owners: { 'z/Update': ['f:data/f:x'] },
      },
    ],
  },
];

const T = (i: number) => `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`;

function ownersOf(obj: any): Owners {
  const out: Owners = {};
  for (const e of obj?.metadata?.managedFields ?? [])
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1)
      .paths()
      .map((p) => p.join('/'))
      .sort();
  return out;
}

function at(obj: any, dotted: string): unknown {
  return dotted.split('.').reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), obj);
}

for (const sc of scenarios) {
  test(`apply scenario: ${sc.name}`, () => {
    let obj: any;
    sc.steps.forEach((step, i) => {
      const schema = step.schema ?? sc.schema;
      const label = `step ${i + 1} (${step.by})`;
      if (step.apply) {
        const before = JSON.stringify(obj);
        const run = () =>
          apply(obj, structuredClone(step.apply), schema, step.by, 'v1', T(i), !!step.force, {
            kind: 'K',
            group: '',
            name: 'n',
          });
        if (step.conflicts) {
          assert.throws(
            run,
            (e: unknown) => {
              assert.ok(e instanceof StatusError, label);
              assert.equal(e.code, 409);
              assert.equal(e.status.reason, 'Conflict');
              const causes = e.status.details!.causes!.map((c) => `${c.message} ${c.field}`).sort();
              assert.deepEqual(causes, [...step.conflicts!].sort(), label);
              assert.ok(e.status.details!.causes!.every((c) => c.reason === 'FieldManagerConflict'));
              return true;
            },
            label,
          );
          assert.equal(JSON.stringify(obj), before, `${label}: a conflict changes nothing`);
        } else {
          const next = run();
          assert.equal(JSON.stringify(obj), before, `${label}: apply never mutates the live object`);
          obj = next;
        }
      } else {
        const next = step.update!(structuredClone(obj));
        recordUpdate(next, obj, schema, step.by, 'v1', T(i));
        obj = next;
      }
      if (step.owners) assert.deepEqual(ownersOf(obj), step.owners, `${label} owners`);
      for (const [p, v] of step.values ?? []) assert.deepEqual(at(obj, p), v, `${label} ${p}`);
    });
  });
}

test('managedFields record: manager, operation, apiVersion, time, FieldsV1; Apply entries first', () => {
  let obj: any = apply(undefined, cm({ x: '1' }), configMap, 'applier', 'v1', T(1), false, {
    kind: 'ConfigMap',
    group: '',
    name: 'c',
  });
  const next = { ...structuredClone(obj), data: { x: '1', y: '2' } };
  recordUpdate(next, obj, configMap, 'editor', 'v1', T(0));
  obj = next;
  assert.deepEqual(obj.metadata.managedFields, [
    {
      manager: 'applier',
      operation: 'Apply',
      apiVersion: 'v1',
      time: T(1),
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:x': {} } },
    },
    {
      manager: 'editor',
      operation: 'Update',
      apiVersion: 'v1',
      time: T(0),
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:y': {} } },
    },
  ]);
});

test('managedFields record: an update that creates a map marks it with "."', () => {
  const old = cm({});
  const next: any = { ...structuredClone(old), data: { x: '1' } };
  const meta = next.metadata;
  recordUpdate(next, old, configMap, 'kubectl', 'v1', T(2));
  assert.equal(next.metadata, meta, 'recordUpdate changes metadata in place: the store holds on to it');
  assert.deepEqual(next.metadata.managedFields, [
    {
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: 'v1',
      time: T(2),
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:x': {} } },
    },
  ]);
});

test('status is owned only through the status subresource', () => {
  const old = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
  const next: any = { ...old, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Pending' } };
  recordUpdate(next, old, schemaIndex().forKind('', 'v1', 'Pod'), 'creator', 'v1', T(1));
  assert.deepEqual(Object.keys(next.metadata.managedFields[0].fieldsV1), ['f:spec']);
  const status: any = { ...structuredClone(next), status: { phase: 'Running' } };
  recordUpdate(status, next, schemaIndex().forKind('', 'v1', 'Pod'), 'kubelet', 'v1', T(2), 'status');
  assert.deepEqual(
    status.metadata.managedFields.map((e: any) => [e.manager, e.subresource, Object.keys(e.fieldsV1)]),
    [
      ['creator', undefined, ['f:spec']],
      ['kubelet', 'status', ['f:status']],
    ],
  );
  const applied = apply(
    status,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Failed' } },
    schemaIndex().forKind('', 'v1', 'Pod'),
    'a',
    'v1',
    T(3),
    false,
    { kind: 'Pod', group: '', name: 'p' },
  );
  assert.equal(
    applied.metadata.managedFields.find((e: any) => e.manager === 'a'),
    undefined,
    'an apply to the main resource claims no status',
  );
});

test('client-side to server-side migration: kubectl may take fields live still holds as last applied', () => {
  const LA = 'kubectl.kubernetes.io/last-applied-configuration';
  const old = cm({});
  const live: any = cm({ x: '1', y: '1' }, { annotations: { [LA]: JSON.stringify(cm({ x: '1' })) } });
  recordUpdate(live, old, configMap, 'kubectl-client-side-apply', 'v1', T(1));
  const target = { kind: 'ConfigMap', group: '', name: 'c' };
  const migrated = apply(structuredClone(live), cm({ x: '2' }), configMap, 'kubectl', 'v1', T(2), false, target);
  assert.equal(migrated.data.x, '2');
  assert.equal(
    migrated.metadata.annotations[LA],
    '{"apiVersion":"v1","data":{"x":"2"},"kind":"ConfigMap","metadata":{"name":"c"}}\n',
  );
  assert.throws(
    () => apply(structuredClone(live), cm({ x: '2' }), configMap, 'other', 'v1', T(2), false, target),
    /conflict/,
    'only the kubectl manager migrates',
  );
  assert.throws(
    () => apply(structuredClone(live), cm({ y: '2' }), configMap, 'kubectl', 'v1', T(2), false, target),
    /conflict/,
    'y was never last-applied',
  );
});

test('apply to the status subresource records it and owns only status', () => {
  const pod = schemaIndex().forKind('', 'v1', 'Pod');
  const target = { kind: 'Pod', group: '', name: 'p' };
  const live = apply(
    undefined,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n' } },
    pod,
    'owner',
    'v1',
    T(1),
    false,
    target,
  );
  const config = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { nodeName: 'other' },
    status: { phase: 'Running' },
  };
  const st = apply(live, config, pod, 'kubelet', 'v1', T(2), false, target, 'status');
  assert.deepEqual(
    st.metadata.managedFields.map((e: any) => [e.manager, e.subresource, Object.keys(e.fieldsV1)]),
    [
      ['owner', undefined, ['f:spec']],
      ['kubelet', 'status', ['f:status']],
    ],
  );
  assert.throws(
    () => apply(st, { ...config, status: { phase: 'Failed' } }, pod, 'other', 'v1', T(3), false, target, 'status'),
    (e: any) => e.status.details.causes[0].message === 'conflict with "kubelet" with subresource "status"',
  );
});

test('re-applying the same configuration changes nothing, not even the time', () => {
  const first = apply(undefined, cm({ x: '1' }), configMap, 'a', 'v1', T(1), false, {
    kind: 'ConfigMap',
    group: '',
    name: 'c',
  });
  const again = apply(structuredClone(first), cm({ x: '1' }), configMap, 'a', 'v1', T(9), false, {
    kind: 'ConfigMap',
    group: '',
    name: 'c',
  });
  assert.deepEqual(again, first);
});

test('a configuration without metadata leaves the live metadata untouched', () => {
  const target = { kind: 'ConfigMap', group: '', name: 'c' };
  const live = apply(undefined, cm({ x: '1' }), configMap, 'a', 'v1', T(1), false, target);
  const before = JSON.stringify(live);
  const next = apply(
    live,
    { apiVersion: 'v1', kind: 'ConfigMap', data: { y: '1' } },
    configMap,
    'b',
    'v1',
    T(2),
    false,
    target,
  );
  assert.equal(JSON.stringify(live), before);
  assert.deepEqual(
    next.metadata.managedFields.map((e: any) => e.manager),
    ['a', 'b'],
  );
});

test('an applier is one entry whatever the apiVersion it applies with', () => {
  const first = apply(undefined, cm({ x: '1' }), configMap, 'a', 'v1', T(1), false, {
    kind: 'ConfigMap',
    group: '',
    name: 'c',
  });
  const second = apply(first, cm({ x: '2' }), configMap, 'a', 'v2', T(2), false, {
    kind: 'ConfigMap',
    group: '',
    name: 'c',
  });
  assert.deepEqual(
    second.metadata.managedFields.map((e: any) => [e.manager, e.apiVersion, e.time]),
    [['a', 'v2', T(2)]],
  );
});

test('the conflict message names managers and paths as upstream does', () => {
  const target = { kind: 'ConfigMap', group: '', name: 'c' };
  const live = apply(undefined, cm({ x: '1', y: '1' }), configMap, 'a', 'v1', T(1), false, target);
  assert.throws(
    () => apply(live, cm({ x: '2' }), configMap, 'b', 'v1', T(2), false, target),
    (e: any) => e.status.message === 'Apply failed with 1 conflict: conflict with "a": .data.x',
  );
  assert.throws(
    () => apply(live, cm({ x: '2', y: '2' }), configMap, 'b', 'v1', T(2), false, target),
    (e: any) => e.status.message === 'Apply failed with 2 conflicts: conflicts with "a":\n- .data.x\n- .data.y',
  );
});

test('managedFields in an applied configuration are 400', () => {
  assert.throws(
    () =>
      apply(undefined, cm({}, { managedFields: [] }), configMap, 'a', 'v1', T(1), false, {
        kind: 'ConfigMap',
        group: '',
        name: 'c',
      }),
    (e: any) => e instanceof StatusError && e.code === 400,
  );
});
