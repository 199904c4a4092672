/**
 * The admission chain's rewrite of a mutated write (src/admission/chain.ts): a create drops
 * the server-set metadata of its preview, an update keeps the client's resourceVersion as its
 * precondition. Custom resources have no unconditional update, so an update rewritten without
 * its resourceVersion would answer 422: found untested by the mutation sample (seed 27).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { createOpenCRD } from '../registry/crd/fixtures.js';
import { until } from '../helpers/poll.js';
import { Pki } from '../auth/helpers.js';
import { startAdmissionWebhook, webhook, type AdmissionWebhook } from './helpers.js';

const W = '/apis/example.com/v1/namespaces/default/widgets';
let s: TestServer;
let pki: Pki;
let wh: AdmissionWebhook;

before(async () => {
  pki = new Pki();
  wh = await startAdmissionWebhook(pki);
  s = await startServer(['--disable-admission-plugins', 'ServiceAccount']);
  await createOpenCRD(s.url, 'widgets', 'Widget');
  // every write of a widget gets the label stamped=<operation>
  wh.answers.set('/stamp', (review) => ({
    patch: [{ op: 'add', path: '/metadata/labels', value: { stamped: String(review.request.operation) } }],
  }));
  const cfg = await request(s.url, 'POST', '/apis/admissionregistration.plat.io/v1/mutatingwebhookconfigurations', {
    metadata: { name: 'stamp' },
    webhooks: [
      webhook('stamp.test.plat.io', `${wh.base}/stamp`, wh.caBundle, {
        rules: [
          { operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] },
        ],
      }),
    ],
  });
  assert.equal(cfg.status, 201, cfg.text);
});
after(async () => {
  await s.stop();
  s.cleanup();
  await wh.close();
  pki.cleanup();
});

const widget = (name: string, size: number, resourceVersion?: string) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { size },
});

test('a mutated update of a custom resource keeps its resourceVersion: applied when current, 409 when stale', async () => {
  const created = await until(async () => {
    const r = await request(s.url, 'POST', W, widget(`w${Date.now()}`, 1));
    assert.equal(r.status, 201, r.text);
    return r.json.metadata.labels?.stamped === 'CREATE' ? r.json : undefined;
  }, 'the mutating webhook to stamp a create');
  const name: string = created.metadata.name;
  const rv: string = created.metadata.resourceVersion;
  const put = await request(s.url, 'PUT', `${W}/${name}`, widget(name, 2, rv));
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.spec.size, 2);
  assert.equal(put.json.metadata.labels.stamped, 'UPDATE');
  assert.equal(put.json.metadata.uid, created.metadata.uid);
  assert.equal(put.json.metadata.creationTimestamp, created.metadata.creationTimestamp);
  assert.notEqual(put.json.metadata.resourceVersion, rv);
  const stale = await request(s.url, 'PUT', `${W}/${name}`, widget(name, 3, rv));
  assert.equal(stale.status, 409, stale.text);
  assert.equal(stale.json.reason, 'Conflict');
  assert.equal((await request(s.url, 'GET', `${W}/${name}`)).json.spec.size, 2, 'the stale update changed nothing');
});
