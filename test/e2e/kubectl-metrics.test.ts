/**
 * kubectl v1.32 `get --raw /metrics`: the request counts match the requests kubectl made; a
 * deprecated version prints upstream's warning and shows in apiserver_requested_deprecated_apis.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { parseMetrics, sampleValue } from '../helpers/metrics.js';

const k = kubectlWithServer('metrics', [
  '--api-domain',
  'k8s.io',
  '--runtime-config',
  'admissionregistration.k8s.io/v1beta1=true',
]);
const { kubectl, ok } = k;

test('kubectl get --raw /metrics counts the lists, gets and creates kubectl made', async () => {
  const CM = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver', dry_run: '' };
  const SEC = { ...CM, resource: 'secrets' };
  const count = (text: string, labels: Record<string, string>) =>
    sampleValue(parseMetrics(text), 'apiserver_request_total', labels);
  await ok('get', 'configmaps', '-n', 'default'); // warms the discovery cache
  const before = await ok('get', '--raw', '/metrics');
  for (let i = 0; i < 3; i++) await ok('get', 'configmaps', '-n', 'default');
  await ok('get', 'secrets', '-A');
  assert.notEqual((await kubectl('get', 'configmap', 'nope', '-n', 'default')).code, 0);
  await ok('create', 'secret', 'generic', 's1', '--from-literal', 'k=v', '-n', 'default');
  const after = await ok('get', '--raw', '/metrics');
  const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
  assert.equal(delta({ ...CM, verb: 'LIST', scope: 'namespace', code: '200' }), 3);
  assert.equal(delta({ ...SEC, verb: 'LIST', scope: 'cluster', code: '200' }), 1);
  assert.equal(delta({ ...CM, verb: 'GET', scope: 'resource', code: '404' }), 1);
  assert.equal(delta({ ...SEC, verb: 'POST', scope: 'resource', code: '201' }), 1);
  assert.equal(
    delta({ verb: 'GET', subresource: '/metrics', code: '200' }),
    1,
    'the first scrape, counted once answered',
  );
  assert.equal(sampleValue(parseMetrics(after), 'apiserver_storage_objects', { resource: 'secrets' }), 1);
});

test('kubectl prints the deprecation warning and the gauge records the request', async () => {
  const r = await kubectl('get', 'validatingadmissionpolicies.v1beta1.admissionregistration.k8s.io');
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /Warning: admissionregistration\.k8s\.io\/v1beta1 ValidatingAdmissionPolicy is deprecated in v1\.31\+, unavailable in v1\.34\+; use admissionregistration\.k8s\.io\/v1 ValidatingAdmissionPolicy/,
  );
  const m = parseMetrics(await ok('get', '--raw', '/metrics'));
  assert.equal(
    sampleValue(m, 'apiserver_requested_deprecated_apis', {
      group: 'admissionregistration.k8s.io',
      version: 'v1beta1',
      resource: 'validatingadmissionpolicies',
      subresource: '',
      removed_release: '1.34',
    }),
    1,
  );
});
