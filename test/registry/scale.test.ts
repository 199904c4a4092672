import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { kubectlEnv } from '../helpers/kubectl.js';

const run = promisify(execFile);
let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  },
});
const path = (name: string) => `/apis/apps/v1/namespaces/default/deployments/${name}`;

test('GET scale shows spec.replicas and the selector as a string', async () => {
  assert.equal(
    (await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('sc1'))).status,
    201,
  );
  const r = await request(s.url, 'GET', path('sc1') + '/scale');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'Scale');
  assert.equal(r.json.apiVersion, 'autoscaling/v1');
  assert.equal(r.json.spec.replicas, 1);
  assert.equal(r.json.status.selector, 'app=sc1');
});

test('PUT and merge PATCH of scale change only spec.replicas; stale scale is 409; negative is 422', async () => {
  await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('sc2'));
  const sc = (await request(s.url, 'GET', path('sc2') + '/scale')).json;
  const put = await request(s.url, 'PUT', path('sc2') + '/scale', { ...sc, spec: { replicas: 3 } });
  assert.equal(put.status, 200);
  assert.equal(put.json.spec.replicas, 3);
  assert.equal((await request(s.url, 'GET', path('sc2'))).json.spec.replicas, 3);
  const stale = await request(s.url, 'PUT', path('sc2') + '/scale', { ...sc, spec: { replicas: 4 } });
  assert.equal(stale.status, 409);
  const patch = await request(
    s.url,
    'PATCH',
    path('sc2') + '/scale',
    { spec: { replicas: 7 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patch.status, 200);
  assert.equal(patch.json.spec.replicas, 7);
  const neg = await request(
    s.url,
    'PATCH',
    path('sc2') + '/scale',
    { spec: { replicas: -1 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(neg.status, 422);
  assert.equal(neg.json.details.causes[0].field, 'spec.replicas');
});

test('kubectl scale deployment --replicas=5', async () => {
  await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('sc3'));
  const { stdout } = await run('/usr/bin/kubectl', ['--server', s.url, 'scale', 'deployment', 'sc3', '--replicas=5'], {
    env: kubectlEnv(s),
  });
  assert.match(stdout, /scaled/);
  assert.equal((await request(s.url, 'GET', path('sc3'))).json.spec.replicas, 5);
});

test('scale of a missing object is 404', async () => {
  const r = await request(s.url, 'GET', path('nope') + '/scale');
  assert.equal(r.status, 404);
});
