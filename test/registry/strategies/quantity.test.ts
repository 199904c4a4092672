/**
 * resource.Quantity fields of built-in kinds end to end: every write path stores and answers
 * upstream's canonical form, and an unparseable quantity anywhere is a 400 decode error with
 * upstream's message, nothing stored.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../../src/codec/protobuf.js';
import { startServer, request, type TestServer } from '../../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const NS = '/api/v1/namespaces/default';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const T = { timeout: 20_000 };
const FORMAT = `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`;

const pod = (name: string, resources: any) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx:1', resources }] },
});
const deployment = (name: string, resources: any) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'nginx:1', resources }] },
    },
  },
});

test('create: a Pod answers and stores canonical quantities', T, async () => {
  const body = pod('canon', { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: 2, memory: '1.5Gi' } });
  const c = await request(s.url, 'POST', `${NS}/pods`, body);
  assert.equal(c.status, 201, c.text);
  const want = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } };
  assert.deepEqual(c.json.spec.containers[0].resources, want);
  const g = await request(s.url, 'GET', `${NS}/pods/canon`);
  assert.deepEqual(g.json.spec.containers[0].resources, want);
});

test('update: a PUT with another spelling of the stored values changes nothing', T, async () => {
  const c = await request(s.url, 'POST', `${NS}/pods`, pod('same', { requests: { cpu: '500m' } }));
  assert.equal(c.status, 201, c.text);
  const put = await request(s.url, 'PUT', `${NS}/pods/same`, {
    ...c.json,
    spec: { ...c.json.spec, containers: [{ ...c.json.spec.containers[0], resources: { requests: { cpu: 0.5 } } }] },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.spec.containers[0].resources.requests.cpu, '500m');
  assert.equal(put.json.metadata.resourceVersion, c.json.metadata.resourceVersion);
});

test('patch: merge patch and apply write canonical quantities', T, async () => {
  const c = await request(s.url, 'POST', DEP, deployment('web', { requests: { cpu: '100m' } }));
  assert.equal(c.status, 201, c.text);
  const merge = {
    spec: {
      template: {
        spec: {
          containers: [{ name: 'c', image: 'nginx:1', resources: { requests: { cpu: '0.25', memory: '2048Mi' } } }],
        },
      },
    },
  };
  const m = await request(s.url, 'PATCH', `${DEP}/web`, merge, { 'content-type': 'application/merge-patch+json' });
  assert.equal(m.status, 200, m.text);
  assert.deepEqual(m.json.spec.template.spec.containers[0].resources.requests, { cpu: '250m', memory: '2Gi' });
  const yaml = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: applied',
    'spec:',
    '  selector:',
    '    matchLabels: {app: applied}',
    '  template:',
    '    metadata:',
    '      labels: {app: applied}',
    '    spec:',
    '      containers:',
    '      - name: c',
    '        image: nginx:1',
    '        resources:',
    '          limits: {cpu: 1500m, memory: 0.5Gi}',
    '          requests: {cpu: 0.1, memory: 12000}',
    '',
  ].join('\n');
  const a = await request(s.url, 'PATCH', `${DEP}/applied?fieldManager=test`, yaml, {
    'content-type': 'application/apply-patch+yaml',
  });
  assert.equal(a.status, 201, a.text);
  assert.deepEqual(a.json.spec.template.spec.containers[0].resources, {
    limits: { cpu: '1500m', memory: '512Mi' },
    requests: { cpu: '100m', memory: '12k' },
  });
  const again = await request(s.url, 'PATCH', `${DEP}/applied?fieldManager=test`, yaml, {
    'content-type': 'application/apply-patch+yaml',
  });
  assert.equal(again.status, 200, again.text);
  assert.equal(
    again.json.metadata.resourceVersion,
    a.json.metadata.resourceVersion,
    're-applying the same spelling is a no-op',
  );
});

test('other kinds: PVC requests and ResourceQuota hard are canonical', T, async () => {
  const pvc = await request(s.url, 'POST', `${NS}/persistentvolumeclaims`, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1024Mi' } } },
  });
  assert.equal(pvc.status, 201, pvc.text);
  assert.equal(pvc.json.spec.resources.requests.storage, '1Gi');
  // in a namespace of its own: the quota would limit the other tests' pods
  const ns = await request(s.url, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'quota' },
  });
  assert.equal(ns.status, 201, ns.text);
  const rq = await request(s.url, 'POST', '/api/v1/namespaces/quota/resourcequotas', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q' },
    spec: { hard: { cpu: '2000m', pods: '10' } },
  });
  assert.equal(rq.status, 201, rq.text);
  assert.deepEqual(rq.json.spec.hard, { cpu: '2', pods: '10' });
});

test('errors: an unparseable quantity anywhere is a 400 decode error, nothing stored', T, async () => {
  const bad = await request(s.url, 'POST', DEP, deployment('bad', { limits: { memory: 'lots' } }));
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.reason, 'BadRequest');
  assert.equal(bad.json.message, `Deployment in version "v1" cannot be handled as a Deployment: ${FORMAT}`);
  assert.equal((await request(s.url, 'GET', `${DEP}/bad`)).status, 404);
  const suffix = await request(s.url, 'POST', `${NS}/pods`, pod('suffix', { requests: { memory: '32MMi' } }));
  assert.equal(suffix.status, 400, suffix.text);
  assert.equal(
    suffix.json.message,
    `Pod in version "v1" cannot be handled as a Pod: unable to parse quantity's suffix`,
  );
  assert.equal((await request(s.url, 'GET', `${NS}/pods/suffix`)).status, 404);
  // a Pod of this test's own to patch (it runs alone too)
  const target = await request(s.url, 'POST', `${NS}/pods`, pod('unparseable-patch', { requests: { cpu: '1' } }));
  assert.equal(target.status, 201, target.text);
  const patched = await request(
    s.url,
    'PATCH',
    `${NS}/pods/unparseable-patch`,
    { spec: { containers: [{ name: 'c', resources: { requests: { cpu: 'x' } } }] } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.equal(patched.status, 400, patched.text);
  assert.equal(patched.json.message, `Pod in version "v1" cannot be handled as a Pod: ${FORMAT}`);
  const status = await request(s.url, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1' },
    status: { capacity: { cpu: 'four' } },
  });
  assert.equal(status.status, 400, status.text);
  assert.equal(status.json.message, `Node in version "v1" cannot be handled as a Node: ${FORMAT}`);
});

test('protobuf: a Protobuf-encoded Pod create is canonicalized too', T, async () => {
  const codec = new ProtobufCodec();
  const body = codec.encodeObject({
    ...pod('pb', { requests: { cpu: '1000m', memory: '0.5Gi' } }),
    metadata: { name: 'pb', namespace: 'default' },
  });
  const res = await fetch(`${s.url}${NS}/pods`, {
    method: 'POST',
    headers: { 'content-type': PROTOBUF_MEDIA_TYPE, accept: 'application/json' },
    body: body as BodyInit,
  });
  const json = (await res.json()) as any;
  assert.equal(res.status, 201, JSON.stringify(json));
  assert.deepEqual(json.spec.containers[0].resources.requests, { cpu: '1', memory: '512Mi' });
});
