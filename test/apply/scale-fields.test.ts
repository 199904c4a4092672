/**
 * Field ownership across the scale subresource (upstream managedfields.ScaleHandler): a write of
 * /scale records its writer with subresource "scale" and the parent's replicas path, an apply
 * to /scale is an Apply that conflicts with the replicas' other owners unless forced, and the
 * parent entries that lose the replicas keep the rest. In process: a shard actor, no HTTP.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../../src/actors/protocol.js';
import type { PatchType } from '../../src/registry/ops.js';
import { toParent, toSubresource } from '../../src/apply/scale-fields.js';
import { openShard, type LocalShard } from '../helpers/shard.js';

let local: LocalShard;
let nextId = 1;
before(async () => {
  local = await openShard('scale-fields');
});
after(() => local.close());

const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };
const scale = { ...deployments, subresource: 'scale' };
const enc = { format: 'json', pretty: false } as const;
const base = { enc, dryRun: false, namespace: 'default' };
type Entry = { manager: string; operation: string; apiVersion: string; subresource?: string; fieldsV1: object };

function answer(r: Result): { code: number; json: any } {
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

const create = async (name: string) =>
  answer(
    await local.one({
      ...base,
      id: nextId++,
      op: 'create',
      type: deployments,
      fieldManager: 'creator',
      body: {
        contentType: 'json',
        text: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
          },
        }),
      },
    }),
  );

const patchScale = async (name: string, patchType: PatchType, replicas: number, manager: string, force = false) =>
  answer(
    await local.one({
      ...base,
      id: nextId++,
      op: 'patch',
      type: scale,
      name,
      patchType,
      text: JSON.stringify(
        patchType === 'apply'
          ? { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas } }
          : { spec: { replicas } },
      ),
      force,
      fieldManager: manager,
    }),
  );

const owners = async (name: string): Promise<Entry[]> =>
  answer(await local.one({ id: nextId++, op: 'get', type: deployments, enc, namespace: 'default', name })).json.metadata
    .managedFields;
const brief = (es: Entry[]) => es.map((e) => [e.manager, e.operation, e.apiVersion, e.subresource ?? '']);
const REPLICAS = { 'f:spec': { 'f:replicas': {} } };

test('a patch of /scale records an Update with subresource scale; the creator keeps all but the replicas', async () => {
  assert.equal((await create('s1')).code, 201);
  const p = await patchScale('s1', 'merge', 2, 'scaler');
  assert.equal(p.code, 200, JSON.stringify(p.json));
  assert.equal(p.json.kind, 'Scale');
  const es = await owners('s1');
  assert.deepEqual(brief(es), [
    ['creator', 'Update', 'apps/v1', ''],
    ['scaler', 'Update', 'apps/v1', 'scale'],
  ]);
  assert.deepEqual(es[1]!.fieldsV1, REPLICAS);
  assert.equal((es[0]!.fieldsV1 as any)['f:spec']['f:replicas'], undefined, 'the creator lost the replicas');
  assert.ok((es[0]!.fieldsV1 as any)['f:spec']['f:template'], 'and kept the rest');
});

test('an apply to /scale conflicts with the replicas owner unless forced, then owns them as an Apply', async () => {
  assert.equal((await create('s2')).code, 201);
  const conflict = await patchScale('s2', 'apply', 3, 'autoscaler');
  assert.equal(conflict.code, 409, JSON.stringify(conflict.json));
  assert.equal(conflict.json.reason, 'Conflict');
  assert.deepEqual(
    conflict.json.details.causes.map((c: { field: string }) => c.field),
    ['.spec.replicas'],
  );
  const forced = await patchScale('s2', 'apply', 3, 'autoscaler', true);
  assert.equal(forced.code, 200, JSON.stringify(forced.json));
  assert.equal(forced.json.spec.replicas, 3);
  const es = await owners('s2');
  assert.deepEqual(brief(es), [
    ['autoscaler', 'Apply', 'apps/v1', 'scale'],
    ['creator', 'Update', 'apps/v1', ''],
  ]);
  assert.deepEqual(es[0]!.fieldsV1, REPLICAS);
  // the same apply again owns them already: no conflict, nothing written
  const again = await patchScale('s2', 'apply', 3, 'autoscaler');
  assert.equal(again.code, 200, JSON.stringify(again.json));
  assert.equal(again.json.metadata.resourceVersion, forced.json.metadata.resourceVersion);
});

test('toSubresource and toParent map the replicas path both ways', () => {
  const e = (manager: string, fieldsV1: object, operation = 'Update', subresource?: string) => ({
    manager,
    operation,
    apiVersion: 'example.com/v1',
    time: 't',
    fieldsType: 'FieldsV1',
    fieldsV1,
    ...(subresource ? { subresource } : {}),
  });
  const path = ['spec', 'count'];
  const parent = [e('a', { 'f:spec': { 'f:count': {}, 'f:x': {} } }), e('b', { 'f:spec': { 'f:x': {} } })];
  const sub = toSubresource(parent, path);
  assert.deepEqual(
    sub.map((x) => [x.manager, x.apiVersion, x.fieldsV1]),
    [['a', 'autoscaling/v1', REPLICAS]],
  );
  // a keeps its entry while it still owns the Scale's replicas
  assert.deepEqual(toParent(parent, sub, path, 'example.com/v1'), parent);
  // c took them: a loses the count only, c gets the parent's path
  const taken = toParent(parent, [e('c', REPLICAS, 'Update', 'scale')], path, 'example.com/v1');
  assert.deepEqual(
    taken.map((x) => [x.manager, x.fieldsV1]),
    [
      ['a', { 'f:spec': { 'f:x': {} } }],
      ['b', { 'f:spec': { 'f:x': {} } }],
      ['c', { 'f:spec': { 'f:count': {} } }],
    ],
  );
  // an owner of nothing else is dropped
  assert.deepEqual(
    toParent([e('only', { 'f:spec': { 'f:count': {} } })], [], path, 'v').map((x) => x.manager),
    [],
  );
});
