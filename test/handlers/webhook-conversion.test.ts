/**
 * conversion.strategy Webhook end to end: a loopback HTTPS webhook converts between v1
 * (storage: spec.sizeCm, an integer) and v2 (spec.size, "<n>cm"); writes and reads in v2 go
 * through ConversionReviews (lists in one batch; merge patches apply to the v2 view), objects are stored in v1; a webhook that is
 * down or answers wrongly makes the request a 500 naming the conversion.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { Pki } from '../auth/helpers.js';
import { startAdmissionWebhook, type AdmissionWebhook } from '../admission/helpers.js';
import { waitEstablished } from '../registry/crd/fixtures.js';

let s: TestServer;
let pki: Pki;
let hook: AdmissionWebhook;
/** how the webhook misbehaves: undefined answers correctly */
let mode: 'wrong-uid' | 'wrong-count' | undefined;
const GROUP = 'conv.example.com';
const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';

function convertOne(o: any, desired: string): any {
  const out = structuredClone(o);
  out.apiVersion = desired;
  if (desired.endsWith('/v2') && out.spec?.sizeCm !== undefined) {
    out.spec.size = `${out.spec.sizeCm}cm`;
    delete out.spec.sizeCm;
  }
  if (desired.endsWith('/v1') && out.spec?.size !== undefined) {
    out.spec.sizeCm = parseInt(out.spec.size, 10);
    delete out.spec.size;
  }
  return out;
}

before(async () => {
  pki = new Pki();
  hook = await startAdmissionWebhook(pki);
  s = await startServer();
  const schema = {
    openAPIV3Schema: {
      type: 'object',
      properties: { spec: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
    },
  };
  const crd = {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `boxes.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'boxes', kind: 'Box' },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: `${hook.base}/convert`, caBundle: hook.caBundle },
        },
      },
    },
  };
  // the reply field of a ConversionReview is `response` like an AdmissionReview's: reuse the loopback
  // server (set up here, not in the first test: each test runs alone too)
  hook.answers.set('/convert', (review) => {
    const req = review.request;
    const objects = req.objects.map((o: any) => convertOne(o, req.desiredAPIVersion));
    if (mode === 'wrong-count') objects.pop();
    return {
      response: {
        uid: mode === 'wrong-uid' ? 'other' : req.uid,
        result: { status: 'Success' },
        convertedObjects: objects,
        allowed: undefined,
      },
    };
  });
  assert.equal((await request(s.url, 'POST', CRDS, crd)).status, 201);
  await waitEstablished(s.url, `boxes.${GROUP}`);
});
after(async () => {
  await s.stop();
  s.cleanup();
  await hook.close();
  rmSync(pki.dir, { recursive: true, force: true });
});

test('writes and reads in v2 convert through the webhook; objects are stored in v1', async () => {
  const v2 = `/apis/${GROUP}/v2/namespaces/default/boxes`;
  const created = await request(s.url, 'POST', v2, {
    apiVersion: `${GROUP}/v2`,
    kind: 'Box',
    metadata: { name: 'a' },
    spec: { size: '12cm' },
  });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual([created.json.apiVersion, created.json.spec], [`${GROUP}/v2`, { size: '12cm' }]);
  const asV1 = await request(s.url, 'GET', `/apis/${GROUP}/v1/namespaces/default/boxes/a`);
  assert.deepEqual(asV1.json.spec, { sizeCm: 12 });
  assert.equal(
    (
      await request(s.url, 'POST', `/apis/${GROUP}/v1/namespaces/default/boxes`, {
        apiVersion: `${GROUP}/v1`,
        kind: 'Box',
        metadata: { name: 'b' },
        spec: { sizeCm: 3 },
      })
    ).status,
    201,
  );
  const got = await request(s.url, 'GET', `${v2}/b`);
  assert.deepEqual([got.json.apiVersion, got.json.spec], [`${GROUP}/v2`, { size: '3cm' }]);
  const before = hook.reviews.length;
  const list = await request(s.url, 'GET', v2);
  assert.equal(list.json.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(
    list.json.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.size]),
    [
      ['a', `${GROUP}/v2`, '12cm'],
      ['b', `${GROUP}/v2`, '3cm'],
    ],
  );
  assert.equal(hook.reviews.length - before, 1, 'one ConversionReview for the whole list');
  const review = hook.reviews.at(-1)!.review;
  assert.deepEqual(
    [review.apiVersion, review.kind, review.request.desiredAPIVersion, review.request.objects.length],
    ['apiextensions.plat.io/v1', 'ConversionReview', `${GROUP}/v2`, 2],
  );
  const updated = await request(s.url, 'PUT', `${v2}/b`, { ...got.json, spec: { size: '4cm' } });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual((await request(s.url, 'GET', `/apis/${GROUP}/v1/namespaces/default/boxes/b`)).json.spec, {
    sizeCm: 4,
  });
  const patched = await request(
    s.url,
    'PATCH',
    `${v2}/b`,
    { spec: { size: '7cm' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual([patched.json.apiVersion, patched.json.spec], [`${GROUP}/v2`, { size: '7cm' }]);
  assert.deepEqual((await request(s.url, 'GET', `/apis/${GROUP}/v1/namespaces/default/boxes/b`)).json.spec, {
    sizeCm: 7,
  });
});

test('a webhook that answers wrongly, or not at all, is a 500 naming the conversion', async () => {
  // two Boxes of its own, stored through v1 (no conversion), in its own namespace (it runs alone too)
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'wrong-answers' } })).status,
    201,
  );
  const v1 = `/apis/${GROUP}/v1/namespaces/wrong-answers/boxes`;
  for (const name of ['w1', 'w2']) {
    const made = await request(s.url, 'POST', v1, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Box',
      metadata: { name },
      spec: { sizeCm: 2 },
    });
    assert.equal(made.status, 201, made.text);
  }
  const v2 = `/apis/${GROUP}/v2/namespaces/wrong-answers/boxes`;
  mode = 'wrong-uid';
  const uid = await request(s.url, 'GET', `${v2}/w1`);
  assert.equal(uid.status, 500);
  assert.match(
    uid.json.message,
    /^conversion webhook for conv\.example\.com\/v1, Kind=Box failed: expected response uid "[0-9a-f-]+", got "other"$/,
  );
  mode = 'wrong-count';
  const count = await request(s.url, 'GET', v2);
  assert.equal(count.status, 500);
  assert.equal(
    count.json.message,
    'conversion webhook for conv.example.com/v1, Kind=Box failed: returned 1 objects, expected 2',
  );
  mode = undefined;
  await hook.close();
  const down = await request(s.url, 'POST', v2, {
    apiVersion: `${GROUP}/v2`,
    kind: 'Box',
    metadata: { name: 'c' },
    spec: { size: '1cm' },
  });
  assert.equal(down.status, 500);
  assert.equal(down.json.reason, 'InternalError');
  assert.match(
    down.json.message,
    /^conversion webhook for conv\.example\.com\/v2, Kind=Box failed: failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": /,
  );
  assert.equal((await request(s.url, 'GET', `${v1}/c`)).status, 404);
});
