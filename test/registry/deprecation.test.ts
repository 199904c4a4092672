/**
 * Deprecated API versions (resource-api.md "Events" rule 4 and "Deprecation rules"): requests to
 * a beta version past its deprecation release get upstream's Warning header and set
 * apiserver_requested_deprecated_apis; other versions get neither; removed versions are 404.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { parseMetrics, sampleValue } from '../helpers/metrics.js';

const AR = 'admissionregistration.plat.io';
let s: TestServer;
before(async () => {
  s = await startServer([
    '--runtime-config',
    `${AR}/v1beta1=true,authentication.plat.io/v1beta1=true,networking.plat.io/v1beta1=true`,
  ]);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const VAP_WARNING = `299 - "${AR}/v1beta1 ValidatingAdmissionPolicy is deprecated in v1.31+, unavailable in v1.34+; use ${AR}/v1 ValidatingAdmissionPolicy"`;

test('a deprecated version answers with the Warning header on every verb, the replacement version without', async () => {
  const list = await request(s.url, 'GET', `/apis/${AR}/v1beta1/validatingadmissionpolicies`);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.headers.get('warning'), VAP_WARNING);
  const missing = await request(s.url, 'GET', `/apis/${AR}/v1beta1/validatingadmissionpolicies/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('warning'), VAP_WARNING, 'errors carry it too');
  const v1 = await request(s.url, 'GET', `/apis/${AR}/v1/validatingadmissionpolicies`);
  assert.equal(v1.status, 200);
  assert.equal(v1.headers.get('warning'), null);
  const ip = await request(s.url, 'GET', '/apis/networking.plat.io/v1beta1/ipaddresses');
  assert.equal(ip.status, 200);
  assert.equal(ip.headers.get('warning'), null, 'introduced in 1.31: deprecated only from 1.34');
});

test('a virtual kind in a deprecated version warns too', async () => {
  const r = await request(s.url, 'POST', '/apis/authentication.plat.io/v1beta1/selfsubjectreviews', {
    apiVersion: 'authentication.plat.io/v1beta1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(
    r.headers.get('warning'),
    '299 - "authentication.plat.io/v1beta1 SelfSubjectReview is deprecated in v1.30+, unavailable in v1.33+; use authentication.plat.io/v1 SelfSubjectReview"',
  );
});

test('apiserver_requested_deprecated_apis is 1 for each deprecated resource requested, joinable to apiserver_request_total', async () => {
  // its own requests (it runs alone too): two LISTs of one deprecated resource, one create of another
  for (let i = 0; i < 2; i++)
    assert.equal((await request(s.url, 'GET', `/apis/${AR}/v1beta1/validatingadmissionpolicies`)).status, 200);
  const review = await request(s.url, 'POST', '/apis/authentication.plat.io/v1beta1/selfsubjectreviews', {
    apiVersion: 'authentication.plat.io/v1beta1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(review.status, 201, review.text);
  const m = parseMetrics((await request(s.url, 'GET', '/metrics')).text);
  const labels = { group: AR, version: 'v1beta1', resource: 'validatingadmissionpolicies', subresource: '' };
  assert.equal(sampleValue(m, 'apiserver_requested_deprecated_apis', { ...labels, removed_release: '1.34' }), 1);
  assert.equal(
    sampleValue(m, 'apiserver_requested_deprecated_apis', { resource: 'selfsubjectreviews', removed_release: '1.33' }),
    1,
  );
  assert.ok(
    !m.some(
      (x) =>
        x.name === 'apiserver_requested_deprecated_apis' && x.labels.resource === 'validatingadmissionpolicybindings',
    ),
    'not requested yet',
  );
  assert.ok(!m.some((x) => x.name === 'apiserver_requested_deprecated_apis' && x.labels.resource === 'ipaddresses'));
  assert.ok(sampleValue(m, 'apiserver_request_total', { ...labels, verb: 'LIST', code: '200' }) >= 2);
});

test('versions removed by v1.32 are not served', async () => {
  for (const path of [
    '/apis/flowcontrol.apiserver.plat.io/v1beta3/flowschemas',
    '/apis/flowcontrol.apiserver.plat.io/v1beta2/prioritylevelconfigurations',
    '/apis/policy/v1beta1/poddisruptionbudgets',
  ]) {
    const r = await request(s.url, 'GET', path);
    assert.equal(r.status, 404, path);
  }
});
