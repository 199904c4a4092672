import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('default namespaces exist at first start', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'NamespaceList');
  const names = r.json.items.map((n: any) => n.metadata.name);
  for (const n of ['default', 'plat-system', 'plat-public', 'plat-node-lease']) assert.ok(names.includes(n), n);
});

test('create, get, duplicate create, stale update, delete', async () => {
  const c = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('crud-1'));
  assert.equal(c.status, 201);
  assert.equal(c.json.kind, 'ConfigMap');
  assert.equal(c.json.apiVersion, 'v1');
  assert.match(c.json.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.match(c.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const dup = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('crud-1'));
  assert.equal(dup.status, 409);
  assert.equal(dup.json.reason, 'AlreadyExists');
  const g = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/crud-1');
  assert.equal(g.status, 200);
  assert.equal(g.json.metadata.resourceVersion, c.json.metadata.resourceVersion);
  const upd = { ...g.json, data: { k: 'v2' } };
  const u = await request(s.url, 'PUT', '/api/v1/namespaces/default/configmaps/crud-1', upd);
  assert.equal(u.status, 200);
  assert.notEqual(u.json.metadata.resourceVersion, g.json.metadata.resourceVersion);
  const stale = await request(s.url, 'PUT', '/api/v1/namespaces/default/configmaps/crud-1', {
    ...upd,
    data: { k: 'v3' },
  });
  assert.equal(stale.status, 409);
  assert.equal(stale.json.reason, 'Conflict');
  const d = await request(s.url, 'DELETE', '/api/v1/namespaces/default/configmaps/crud-1');
  assert.equal(d.status, 200);
  assert.equal(d.json.kind, 'Status');
  assert.equal(d.json.status, 'Success');
  assert.deepEqual(d.json.details, { name: 'crud-1', kind: 'configmaps', uid: c.json.metadata.uid });
  const gone = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/crud-1');
  assert.equal(gone.status, 404);
  assert.equal(gone.json.reason, 'NotFound');
});

test('generateName produces a 5-character suffix', async () => {
  const r = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { generateName: 'gen-' },
    data: {},
  });
  assert.equal(r.status, 201);
  assert.match(r.json.metadata.name, /^gen-[a-z0-9]{5}$/);
});

test('namespaced create in a missing namespace is 404', async () => {
  const r = await request(s.url, 'POST', '/api/v1/namespaces/nope/configmaps', configMap('x'));
  assert.equal(r.status, 404);
  assert.equal(r.json.reason, 'NotFound');
});

test('body namespace mismatch is 400; invalid name is 422 with causes', async () => {
  const m = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'a', namespace: 'other' },
  });
  assert.equal(m.status, 400);
  const bad = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('Bad_Name'));
  assert.equal(bad.status, 422);
  assert.equal(bad.json.reason, 'Invalid');
  assert.equal(bad.json.details.causes[0].field, 'metadata.name');
});

test('generation starts at 1 and bumps when the spec changes', async () => {
  const dep = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'gen-d' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };
  const c = await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', dep);
  assert.equal(c.status, 201);
  assert.equal(c.json.metadata.generation, 1);
  const u = await request(s.url, 'PUT', '/apis/apps/v1/namespaces/default/deployments/gen-d', {
    ...c.json,
    spec: { ...c.json.spec, replicas: 3 },
  });
  assert.equal(u.status, 200);
  assert.equal(u.json.metadata.generation, 2);
  const l = await request(s.url, 'PUT', '/apis/apps/v1/namespaces/default/deployments/gen-d', {
    ...u.json,
    metadata: { ...u.json.metadata, labels: { x: 'y' } },
  });
  assert.equal(l.json.metadata.generation, 2);
});

test('status subresource changes only status; main PUT keeps status', async () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'st-p' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  };
  const c = await request(s.url, 'POST', '/api/v1/namespaces/default/pods', pod);
  assert.equal(c.status, 201);
  assert.equal(c.json.status.phase, 'Pending');
  const st = await request(s.url, 'PUT', '/api/v1/namespaces/default/pods/st-p/status', {
    ...c.json,
    metadata: { ...c.json.metadata, labels: { changed: 'yes' } },
    status: { phase: 'Running' },
  });
  assert.equal(st.status, 200);
  assert.equal(st.json.status.phase, 'Running');
  assert.equal(st.json.metadata.labels, undefined);
  const main = await request(s.url, 'PUT', '/api/v1/namespaces/default/pods/st-p', {
    ...st.json,
    status: { phase: 'Failed' },
  });
  assert.equal(main.status, 200);
  assert.equal(main.json.status.phase, 'Running');
});

test('verbs a resource lacks are 405; unknown resources 404', async () => {
  const r = await request(s.url, 'DELETE', '/api/v1/namespaces');
  assert.equal(r.status, 405);
  assert.equal(r.json.reason, 'MethodNotAllowed');
  const u = await request(s.url, 'GET', '/api/v1/nothings');
  assert.equal(u.status, 404);
  const g = await request(s.url, 'GET', '/apis/nogroup/v1/things');
  assert.equal(g.status, 404);
});

test('deletecollection honours label selectors', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'dc' } });
  for (const [n, app] of [
    ['a', 'x'],
    ['b', 'x'],
    ['c', 'y'],
  ]) {
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/dc/configmaps', configMap(n!, { app: app! }))).status,
      201,
    );
  }
  const d = await request(s.url, 'DELETE', '/api/v1/namespaces/dc/configmaps?labelSelector=app%3Dx');
  assert.equal(d.status, 200);
  assert.equal(d.json.items.length, 2);
  const l = await request(s.url, 'GET', '/api/v1/namespaces/dc/configmaps');
  assert.deepEqual(
    l.json.items.map((i: any) => i.metadata.name),
    ['c'],
  );
});

test('finalizers hold deletion until removed', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'fin', finalizers: ['example.com/x'] },
  });
  const d = await request(s.url, 'DELETE', '/api/v1/namespaces/default/configmaps/fin');
  assert.equal(d.status, 200);
  assert.ok(d.json.metadata.deletionTimestamp);
  const g = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/fin');
  assert.equal(g.status, 200);
  const u = await request(s.url, 'PUT', '/api/v1/namespaces/default/configmaps/fin', {
    ...g.json,
    metadata: { ...g.json.metadata, finalizers: [] },
  });
  assert.equal(u.status, 200);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/fin')).status, 404);
});
