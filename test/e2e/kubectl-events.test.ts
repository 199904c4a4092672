/**
 * kubectl v1.32 against the two Event APIs under --api-domain k8s.io: an Event written through
 * events.k8s.io/v1 is listed by `kubectl get events` (core v1) and `kubectl events`, and one
 * written through core v1 by `kubectl get events.v1.events.k8s.io`, with the same columns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';

const k = kubectlWithServer('events', ['--api-domain', 'k8s.io'], 60_000);
const { ok } = k;

test('kubectl reads Events written through either API', async () => {
  const v1 = await request(k.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
    metadata: { name: 'via-v1' },
    eventTime: new Date().toISOString().replace('Z', '000Z'),
    reportingController: 'kubernetes.io/test',
    reportingInstance: 'test-1',
    action: 'Scheduling',
    reason: 'Scheduled',
    type: 'Normal',
    note: 'placed on node-1',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1' },
  });
  assert.equal(v1.status, 201, v1.text);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const core = await request(k.url, 'POST', '/api/v1/namespaces/default/events', {
    metadata: { name: 'via-core' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-2', apiVersion: 'v1' },
    reason: 'Pulled',
    message: 'pulled the image',
    type: 'Normal',
    source: { component: 'kubelet' },
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
  });
  assert.equal(core.status, 201, core.text);

  const coreOut = await ok('get', 'events', '-n', 'default');
  assert.match(coreOut, /Normal\s+Scheduled\s+pod\/web-1\s+placed on node-1/);
  assert.match(coreOut, /Normal\s+Pulled\s+pod\/web-2\s+pulled the image/);
  const v1Out = await ok('get', 'events.v1.events.k8s.io', '-n', 'default');
  assert.match(v1Out, /Normal\s+Scheduled\s+pod\/web-1\s+placed on node-1/);
  assert.match(v1Out, /Normal\s+Pulled\s+pod\/web-2\s+pulled the image/);
  const note = await ok(
    'get',
    'events.v1.events.k8s.io',
    'via-core',
    '-n',
    'default',
    '-o',
    'jsonpath={.note}/{.regarding.name}/{.deprecatedSource.component}',
  );
  assert.equal(note, 'pulled the image/web-2/kubelet');
  const msg = await ok(
    'get',
    'events',
    'via-v1',
    '-n',
    'default',
    '-o',
    'jsonpath={.message}/{.involvedObject.name}/{.reportingComponent}',
  );
  assert.equal(msg, 'placed on node-1/web-1/kubernetes.io/test');
  const events = await ok('events', '-n', 'default');
  assert.match(events, /Scheduled/);
  assert.match(events, /Pulled/);
});
