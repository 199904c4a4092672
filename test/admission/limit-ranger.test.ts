/** The LimitRanger plugin: defaults from a LimitRange, min/max/ratio refusals, Pod sums and claims. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--disable-admission-plugins', 'ServiceAccount']);
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'lr' } })).status, 201);
  const lr = await request(s.url, 'POST', '/api/v1/namespaces/lr/limitranges', {
    metadata: { name: 'limits' },
    spec: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '256Mi' },
          defaultRequest: { cpu: '100m' },
          min: { cpu: '50m' },
          max: { cpu: '1', memory: '1Gi' },
          maxLimitRequestRatio: { cpu: '10' },
        },
        { type: 'Pod', max: { cpu: '2' } },
        { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
      ],
    },
  });
  assert.equal(lr.status, 201, lr.text);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const pod = (name: string, containers: unknown[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers },
});

test('defaults: missing requests and limits filled in, the annotation records them', async () => {
  const r = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('d1', [
      { name: 'a', image: 'x' },
      { name: 'b', image: 'x', resources: { limits: { cpu: '800m', memory: '512Mi' } } },
    ]),
  );
  assert.equal(r.status, 201, r.text);
  const [a, b] = r.json.spec.containers;
  assert.deepEqual(a.resources, {
    limits: { cpu: '500m', memory: '256Mi' },
    requests: { cpu: '100m', memory: '256Mi' },
  });
  assert.deepEqual(b.resources.limits, { cpu: '800m', memory: '512Mi' });
  assert.equal(
    r.json.metadata.annotations['platform.io/limit-ranger'],
    'LimitRanger plugin set: cpu request for container a; cpu, memory limit for container a',
  );
  assert.deepEqual(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/pods', pod('d2', [{ name: 'a', image: 'x' }]))).json.spec
      .containers[0].resources,
    {},
    'other namespaces untouched',
  );
});

test('refusals: max per Container, the ratio, the Pod sum, claims; several errors bracketed', async () => {
  const over = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('r1', [{ name: 'a', image: 'x', resources: { limits: { cpu: '2' }, requests: { cpu: '1' } } }]),
  );
  assert.equal(over.status, 403);
  assert.equal(over.json.reason, 'Forbidden');
  assert.equal(over.json.message, 'pods "r1" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  const ratio = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('r2', [{ name: 'a', image: 'x', resources: { limits: { cpu: '1' }, requests: { cpu: '60m' } } }]),
  );
  assert.equal(ratio.status, 403);
  assert.equal(
    ratio.json.message,
    'pods "r2" is forbidden: cpu max limit to request ratio per Container is 10, but provided ratio is 16.666667',
  );
  const both = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('r3', [
      { name: 'a', image: 'x', resources: { limits: { cpu: '1', memory: '2Gi' }, requests: { cpu: '10m' } } },
    ]),
  );
  assert.equal(
    both.json.message,
    'pods "r3" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 10, but provided ratio is 100.000000]',
  );
  const sum = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod(
      'r4',
      [1, 2, 3].map((i) => ({
        name: `c${i}`,
        image: 'x',
        resources: { limits: { cpu: '1' }, requests: { cpu: '500m' } },
      })),
    ),
  );
  assert.equal(sum.json.message, 'pods "r4" is forbidden: maximum cpu usage per Pod is 2, but limit is 3');
  const pvc = (name: string, storage: string) => ({
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  });
  const small = await request(s.url, 'POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('c1', '500Mi'));
  assert.equal(small.status, 403);
  assert.equal(
    small.json.message,
    'persistentvolumeclaims "c1" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
  );
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('c2', '20Gi'))).json.message,
    'persistentvolumeclaims "c2" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but limit is 20Gi',
  );
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('c3', '5Gi'))).status,
    201,
  );
});

test('bounds are inclusive: a request at the minimum, a limit at the maximum and the ratio at its maximum are admitted', async () => {
  // request 50m (the Container min), limit 500m: limit/request = 10, the maxLimitRequestRatio
  const atMin = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('b1', [{ name: 'a', image: 'x', resources: { requests: { cpu: '50m' }, limits: { cpu: '500m' } } }]),
  );
  assert.equal(atMin.status, 201, atMin.text);
  const atMax = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('b2', [{ name: 'a', image: 'x', resources: { requests: { cpu: '1' }, limits: { cpu: '1', memory: '1Gi' } } }]),
  );
  assert.equal(atMax.status, 201, atMax.text);
  const pvc = (name: string, storage: string) => ({
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  });
  for (const [name, storage] of [
    ['b3', '1Gi'],
    ['b4', '10Gi'],
  ]) {
    const r = await request(s.url, 'POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc(name!, storage!));
    assert.equal(r.status, 201, `${storage}: ${r.text}`);
  }
  const below = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/lr/pods',
    pod('b5', [{ name: 'a', image: 'x', resources: { requests: { cpu: '49m' }, limits: { cpu: '100m' } } }]),
  );
  assert.equal(below.status, 403);
  assert.equal(
    below.json.message,
    'pods "b5" is forbidden: minimum cpu usage per Container is 50m, but request is 49m',
  );
});
