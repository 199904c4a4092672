/**
 * Concurrency checks of the registry that the mutation sample of registry-concurrency (seed 27)
 * found untested: null preconditions are absent ones (a nil pointer upstream), an update of a
 * kind without unconditional update must carry a resourceVersion (422 with upstream's message),
 * and a server-side apply to /status keeps the managedFields it computed (the status view of
 * the write would otherwise drop them).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { toDeleteOptions } from '../../src/registry/deletion.js';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { createOpenCRD } from './crd/fixtures.js';

let s: TestServer;
const W = '/apis/example.com/v1/namespaces/default/gizmos';
const D = '/apis/apps/v1/namespaces/default/deployments';

before(async () => {
  s = await startServer(['--disable-admission-plugins', 'ServiceAccount']);
  await createOpenCRD(s.url, 'gizmos', 'Gizmo');
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('null preconditions fields are absent ones: decoded without error, and the DELETE proceeds (a success Status)', async () => {
  const options = toDeleteOptions({ preconditions: { uid: null, resourceVersion: null } });
  assert.deepEqual(options.preconditions, { uid: null, resourceVersion: null });
  const path = '/api/v1/namespaces/default/configmaps/nullpre';
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'nullpre' } })).status,
    201,
  );
  const del = await request(s.url, 'DELETE', path, {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: { uid: null, resourceVersion: null },
  });
  assert.equal(del.status, 200, del.text);
  // a kind that does not return the deleted object answers upstream's success Status
  assert.deepEqual(del.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: 'nullpre', kind: 'configmaps', uid: del.json.details?.uid },
  });
  assert.match(del.json.details.uid, /^[0-9a-f-]{36}$/);
  assert.equal((await request(s.url, 'GET', path)).status, 404);
});

test('an update of a custom resource without resourceVersion (or "0") is 422 with upstream message; with it, 200', async () => {
  const gizmo = (resourceVersion?: string) => ({
    apiVersion: 'example.com/v1',
    kind: 'Gizmo',
    metadata: { name: 'g', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { a: 1 },
  });
  const created = await request(s.url, 'POST', W, gizmo());
  assert.equal(created.status, 201, created.text);
  for (const rv of [undefined, '0']) {
    const r = await request(s.url, 'PUT', `${W}/g`, gizmo(rv));
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(
      r.json.message,
      'gizmos.example.com "g" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    assert.deepEqual(r.json.details.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 0x0: must be specified for an update',
        field: 'metadata.resourceVersion',
      },
    ]);
  }
  assert.equal((await request(s.url, 'PUT', `${W}/g`, gizmo(created.json.metadata.resourceVersion))).status, 200);
});

test('a server-side apply to /status records the applier (operation Apply, subresource status) beside the others', async () => {
  const dep = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'st' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  };
  assert.equal((await request(s.url, 'POST', `${D}?fieldManager=creator`, dep)).status, 201);
  const applied = await request(
    s.url,
    'PATCH',
    `${D}/st/status?fieldManager=status-applier&force=true`,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'st' }, status: { replicas: 3 } },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  assert.equal(applied.status, 200, applied.text);
  assert.equal(applied.json.status.replicas, 3);
  // [manager, operation, subresource, top-level fields]
  interface Entry {
    manager: string;
    operation: string;
    subresource?: string;
    fieldsV1: Record<string, unknown>;
  }
  const entries = (r: { json: { metadata: { managedFields: Entry[] } } }) =>
    r.json.metadata.managedFields.map((m) => [m.manager, m.operation, m.subresource ?? '', Object.keys(m.fieldsV1)]);
  const expected = [
    ['status-applier', 'Apply', 'status', ['f:status']],
    ['creator', 'Update', '', ['f:spec']],
  ];
  assert.deepEqual(entries(applied), expected);
  assert.deepEqual(applied.json.metadata.managedFields[0].fieldsV1, { 'f:status': { 'f:replicas': {} } });
  assert.deepEqual(entries(await request(s.url, 'GET', `${D}/st`)), expected, 'stored, not only answered');
});
