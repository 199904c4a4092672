/**
 * Server-side apply over HTTP: create-if-absent, the field-ownership state table end to end,
 * conflicts, force, updates by other managers, the managedFields record and its reset.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

function applyCm(
  name: string,
  manager: string,
  data: Record<string, string>,
  extra = '',
): Promise<Awaited<ReturnType<typeof request>>> {
  const yaml =
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n` +
    (Object.keys(data).length
      ? `data:\n${Object.entries(data)
          .map(([k, v]) => `  ${k}: "${v}"`)
          .join('\n')}\n`
      : '');
  return request(s.url, 'PATCH', `${CM}/${name}?fieldManager=${manager}${extra}`, yaml, APPLY);
}

/** manager/operation → the set of leaf paths it owns, as `data.x` strings. */
function owners(obj: any): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const leaves = (node: Record<string, any>, prefix: string): string[] =>
    Object.entries(node).flatMap(([k, v]) =>
      k === '.'
        ? []
        : Object.keys(v).filter((x) => x !== '.').length
          ? leaves(v, prefix + k.slice(2) + '.')
          : [prefix + k.slice(2)],
    );
  for (const e of obj.metadata.managedFields ?? []) out[`${e.manager}/${e.operation}`] = leaves(e.fieldsV1, '').sort();
  return out;
}

test('apply creates an absent object (201), then patches it (200)', async () => {
  const c = await applyCm('ap-create', 'm1', { a: '1' });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json.kind, 'ConfigMap');
  assert.deepEqual(c.json.data, { a: '1' });
  const u = await applyCm('ap-create', 'm1', { a: '2' });
  assert.equal(u.status, 200);
  assert.deepEqual(u.json.data, { a: '2' });
  assert.ok(Number(u.json.metadata.resourceVersion) > Number(c.json.metadata.resourceVersion));
  assert.deepEqual(owners(u.json), { 'm1/Apply': ['data.a'] });
});

test('apply requires fieldManager (422) and rejects managedFields in the body (400)', async () => {
  const r = await request(s.url, 'PATCH', `${CM}/ap-req`, 'apiVersion: v1\nkind: ConfigMap\n', APPLY);
  assert.equal(r.status, 422);
  assert.equal(r.json.reason, 'Invalid');
  assert.equal(r.json.details.causes[0].field, 'fieldManager');
  const m = await request(
    s.url,
    'PATCH',
    `${CM}/ap-req?fieldManager=m`,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { managedFields: [{ manager: 'x' }] } },
    APPLY,
  );
  assert.equal(m.status, 400);
  assert.equal(m.json.reason, 'BadRequest');
  const k = await request(s.url, 'PATCH', `${CM}/ap-req?fieldManager=m`, { apiVersion: 'v1', kind: 'Secret' }, APPLY);
  assert.equal(k.status, 400);
  const meta = await request(
    s.url,
    'PATCH',
    `${CM}/ap-req?fieldManager=m`,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: 'x' },
    APPLY,
  );
  assert.equal(meta.status, 400);
  assert.equal((await request(s.url, 'GET', `${CM}/ap-req`)).status, 404);
});

test('row 1: a different value from another applier is a 409 Conflict naming the field and the manager', async () => {
  const first = await applyCm('ap-conflict', 'alice', { x: '1' });
  const r = await applyCm('ap-conflict', 'bob', { x: '2' });
  assert.equal(r.status, 409);
  assert.equal(r.json.reason, 'Conflict');
  assert.equal(r.json.message, 'Apply failed with 1 conflict: conflict with "alice": .data.x');
  assert.deepEqual(r.json.details.causes, [
    { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.x' },
  ]);
  const g = await request(s.url, 'GET', `${CM}/ap-conflict`);
  assert.equal(g.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
});

test('row 2: force=true takes ownership and removes the field from the other manager', async () => {
  await applyCm('ap-force', 'alice', { x: '1', y: '1' });
  const r = await applyCm('ap-force', 'bob', { x: '2' }, '&force=true');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.data, { x: '2', y: '1' });
  assert.deepEqual(owners(r.json), { 'alice/Apply': ['data.y'], 'bob/Apply': ['data.x'] });
});

test('row 3 and 4: the same value shares ownership; an omitting owner leaves the value to the other', async () => {
  await applyCm('ap-share', 'alice', { x: '1', y: '1' });
  const shared = await applyCm('ap-share', 'bob', { x: '1' });
  assert.equal(shared.status, 200);
  assert.deepEqual(owners(shared.json), { 'alice/Apply': ['data.x', 'data.y'], 'bob/Apply': ['data.x'] });
  const r = await applyCm('ap-share', 'alice', { y: '1' });
  assert.deepEqual(r.json.data, { x: '1', y: '1' });
  assert.deepEqual(owners(r.json), { 'alice/Apply': ['data.y'], 'bob/Apply': ['data.x'] });
});

test('row 5: a sole-owned field omitted by its owner is removed from the object', async () => {
  await applyCm('ap-remove', 'alice', { x: '1', y: '1' });
  const r = await applyCm('ap-remove', 'alice', { y: '1' });
  assert.deepEqual(r.json.data, { y: '1' });
  const g = await request(s.url, 'GET', `${CM}/ap-remove`);
  assert.deepEqual(g.json.data, { y: '1' });
});

test('row 6: PUT and merge patch by other managers never conflict and take the fields they change', async () => {
  const a = await applyCm('ap-update', 'alice', { x: '1', y: '1', z: '1' });
  const put = await request(s.url, 'PUT', `${CM}/ap-update?fieldManager=editor`, {
    ...a.json,
    data: { x: '2', y: '1', z: '1' },
  });
  assert.equal(put.status, 200, put.text);
  const mp = await request(
    s.url,
    'PATCH',
    `${CM}/ap-update`,
    { data: { y: '3' } },
    { ...MERGE, 'user-agent': 'kubectl/v1.32.0 (linux/amd64)' },
  );
  assert.equal(mp.status, 200, mp.text);
  assert.deepEqual(owners(mp.json), {
    'alice/Apply': ['data.z'],
    'editor/Update': ['data.x'],
    'kubectl/Update': ['data.y'],
  });
  const back = await applyCm('ap-update', 'alice', { x: '1', y: '1', z: '1' });
  assert.equal(back.status, 409);
  assert.deepEqual(back.json.details.causes.map((c: any) => `${c.message} ${c.field}`).sort(), [
    'conflict with "editor" using v1 .data.x',
    'conflict with "kubectl" using v1 .data.y',
  ]);
});

test('managedFields record: Apply and Update entries, FieldsV1 with f:, k: and "." markers', async () => {
  const yaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ap-record
  labels: {app: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: nginx:1
        ports: [{containerPort: 80}]
`;
  const r = await request(s.url, 'PATCH', `${DEP}/ap-record?fieldManager=deployer`, yaml, APPLY);
  assert.equal(r.status, 201, r.text);
  const [e] = r.json.metadata.managedFields;
  assert.equal(e.manager, 'deployer');
  assert.equal(e.operation, 'Apply');
  assert.equal(e.apiVersion, 'apps/v1');
  assert.equal(e.fieldsType, 'FieldsV1');
  assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(e.fieldsV1, {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"c"}': {
              '.': {},
              'f:image': {},
              'f:name': {},
              'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
            },
          },
        },
      },
    },
  });
  const u = await request(
    s.url,
    'PATCH',
    `${DEP}/ap-record?fieldManager=tuner`,
    { spec: { replicas: 3, template: { metadata: { annotations: { a: 'b' } } } } },
    MERGE,
  );
  assert.equal(u.status, 200, u.text);
  const upd = u.json.metadata.managedFields.find((m: any) => m.manager === 'tuner');
  assert.equal(upd.operation, 'Update');
  assert.deepEqual(upd.fieldsV1, {
    'f:spec': { 'f:replicas': {}, 'f:template': { 'f:metadata': { 'f:annotations': { '.': {}, 'f:a': {} } } } },
  });
  assert.deepEqual(
    u.json.metadata.managedFields.map((m: any) => m.operation),
    ['Apply', 'Update'],
  );
});

test('a created Pod: the creator owns spec with its defaults, not the status the server sets', async () => {
  const r = await request(s.url, 'POST', '/api/v1/namespaces/default/pods?fieldManager=creator', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'ap-pod' },
    spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status.phase, 'Pending');
  const [e] = r.json.metadata.managedFields;
  assert.deepEqual([e.manager, e.operation, Object.keys(e.fieldsV1)], ['creator', 'Update', ['f:spec']]);
  assert.deepEqual(e.fieldsV1['f:spec']['f:containers']['k:{"name":"c"}']['.'], {});
  assert.deepEqual(e.fieldsV1['f:spec']['f:containers']['k:{"name":"c"}']['f:terminationMessagePolicy'], {});
});

test('re-applying the same configuration is a no-op: same resourceVersion', async () => {
  const a = await applyCm('ap-noop', 'alice', { x: '1' });
  const b = await applyCm('ap-noop', 'alice', { x: '1' });
  assert.equal(b.status, 200);
  assert.match(b.json.metadata.resourceVersion, /^[1-9][0-9]*$/);
  assert.equal(b.json.metadata.resourceVersion, a.json.metadata.resourceVersion);
});

test('PUT with managedFields [{}] resets them; [] keeps them', async () => {
  const a = await applyCm('ap-reset', 'alice', { x: '1' });
  const keep = await request(s.url, 'PUT', `${CM}/ap-reset?fieldManager=editor`, {
    ...a.json,
    metadata: { ...a.json.metadata, managedFields: [] },
  });
  assert.equal(keep.status, 200, keep.text);
  assert.deepEqual(owners(keep.json), { 'alice/Apply': ['data.x'] });
  const reset = await request(s.url, 'PUT', `${CM}/ap-reset?fieldManager=editor`, {
    ...keep.json,
    metadata: { ...keep.json.metadata, managedFields: [{}] },
  });
  assert.equal(reset.status, 200, reset.text);
  assert.equal(reset.json.metadata.managedFields, undefined);
  const g = await request(s.url, 'GET', `${CM}/ap-reset`);
  assert.equal(g.json.metadata.managedFields, undefined);
  const after = await applyCm('ap-reset', 'bob', { x: '2' });
  assert.equal(after.status, 200, 'nobody owns x any more, so no conflict');
});

test('a reset combined with a change leaves the writer owning only what it changed', async () => {
  const a = await applyCm('ap-reset-2', 'alice', { x: '1', y: '1' });
  const r = await request(s.url, 'PUT', `${CM}/ap-reset-2?fieldManager=editor`, {
    ...a.json,
    metadata: { ...a.json.metadata, managedFields: [{}] },
    data: { x: '1', y: '2' },
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(owners(r.json), { 'editor/Update': ['data.y'] });
});
