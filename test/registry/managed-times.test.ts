/**
 * Upstream's IgnoreManagedFieldsTimestampsTransformer: a write that changes nothing but the time
 * of managedFields entries is a no-op (same resourceVersion, nothing stored). Here an apply that
 * spells a quantity differently from its stored canonical form ('0.1' vs '100m') runs again in a
 * later second: the apply's comparison sees the spelling change and stamps a new time, the
 * decoded object is the stored one. The clock is mocked so the second boundary is certain (the
 * end-to-end form, server/quantity, crossed it only by chance).
 */
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../../src/actors/protocol.js';
import { managedTimesOnly } from '../../src/registry/objects.js';
import { openShard, type LocalShard } from '../helpers/shard.js';

let local: LocalShard;
let nextId = 1;
const T0 = Date.parse('2026-01-02T03:04:05.500Z');

before(async () => {
  local = await openShard('managed-times');
});
after(() => {
  mock.timers.reset();
  local.close();
});

const type = { group: '', version: 'v1', resource: 'limitranges' };
const enc = { format: 'json', pretty: false } as const;
const applied = (cpu: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'lr' },
    spec: { limits: [{ type: 'Container', default: { cpu } }] },
  });

function body(r: Result): { code: number; json: any } {
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

const apply = async (cpu: string) =>
  body(
    await local.one({
      id: nextId++,
      op: 'patch',
      type,
      enc,
      dryRun: false,
      namespace: 'default',
      name: 'lr',
      patchType: 'apply',
      text: applied(cpu),
      force: false,
      fieldManager: 'test',
    }),
  );

test('re-applying a quantity in another spelling, a second later, writes nothing', async () => {
  mock.timers.enable({ apis: ['Date'], now: T0 });
  const first = await apply('0.1');
  assert.equal(first.code, 201, JSON.stringify(first.json));
  assert.equal(first.json.spec.limits[0].default.cpu, '100m');
  mock.timers.tick(2_000);
  const again = await apply('0.1');
  assert.equal(again.code, 200, JSON.stringify(again.json));
  assert.equal(again.json.metadata.resourceVersion, first.json.metadata.resourceVersion, 'no write');
  assert.deepEqual(again.json.metadata.managedFields, first.json.metadata.managedFields, 'the stored times');
  // a real change still stamps the time of its second
  mock.timers.tick(2_000);
  const changed = await apply('200m');
  assert.equal(changed.code, 200, JSON.stringify(changed.json));
  assert.notEqual(changed.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
  assert.equal(changed.json.metadata.managedFields[0].time, '2026-01-02T03:04:09Z');
});

test('managedTimesOnly: entries equal but for their time', () => {
  const e = (time: string, manager = 'm') => ({ manager, operation: 'Apply', time, fieldsV1: { 'f:a': {} } });
  assert.equal(managedTimesOnly([e('t1')], [e('t2')]), true);
  assert.equal(managedTimesOnly([e('t1', 'a')], [e('t2', 'b')]), false, 'another manager');
  assert.equal(managedTimesOnly([e('t1')], [e('t1'), e('t1', 'b')]), false, 'another length');
  assert.equal(managedTimesOnly(undefined, [e('t1')]), false);
  const same = [e('t1')];
  assert.equal(managedTimesOnly(same, same), false, 'the same list: nothing to restore');
});
