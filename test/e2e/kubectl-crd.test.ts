/**
 * kubectl v1.32 with CustomResourceDefinitions (`--api-domain k8s.io`, apiextensions.k8s.io,
 * the `x-kubernetes-*` schema extensions kubectl users write): apply -f crd.yaml, the custom
 * resources by plural and short name with their printer columns, scale, patch, delete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { cronTabCRD, waitEstablished } from '../registry/crd/fixtures.js';

const k = kubectlWithServer('crd', ['--api-domain', 'k8s.io']);
const { kubectl, ok } = k;

test('kubectl apply -f crd.yaml, then get, get by short name, scale, patch, delete', async () => {
  const crdFile = join(k.dir, 'crd.yaml');
  writeFileSync(crdFile, stringify(cronTabCRD('apiextensions.k8s.io', 'x-kubernetes')));
  assert.equal(
    (await ok('apply', '-f', crdFile)).trim(),
    'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created',
  );
  await waitEstablished(k.url, 'crontabs.stable.example.com', 'apiextensions.k8s.io');
  assert.match(await ok('get', 'crd'), /^crontabs\.stable\.example\.com\s+\d{4}-/m);

  const crFile = join(k.dir, 'cr.yaml');
  writeFileSync(
    crFile,
    'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: nightly\n  namespace: default\nspec:\n  cronSpec: "0 3 * * *"\n  replicas: 2\n  port: http\n',
  );
  assert.equal((await ok('apply', '-f', crFile)).trim(), 'crontab.stable.example.com/nightly created');
  const table = await ok('get', 'crontabs');
  assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE$/m);
  assert.match(table, /^nightly\s+0 3 \* \* \*\s+2\s+\d+s$/m);
  assert.match(await ok('get', 'ct'), /^nightly\s+/m);
  assert.match(await ok('get', 'all'), /crontab\.stable\.example\.com\/nightly/);

  assert.equal(
    (await ok('scale', 'crontab/nightly', '--replicas=5')).trim(),
    'crontab.stable.example.com/nightly scaled',
  );
  assert.equal(await ok('get', 'ct', 'nightly', '-o', 'jsonpath={.spec.replicas}'), '5');
  assert.equal(
    (await ok('patch', 'ct', 'nightly', '--type=merge', '-p', '{"spec":{"image":"alpine"}}')).trim(),
    'crontab.stable.example.com/nightly patched',
  );
  const obj = JSON.parse(await ok('get', 'ct', 'nightly', '-o', 'json'));
  assert.deepEqual([obj.spec.image, obj.spec.port, obj.spec.replicas], ['alpine', 'http', 5]);

  // kubectl's default patch type is strategic merge, which custom resources refuse (415), as upstream
  const smp = await kubectl('patch', 'ct', 'nightly', '-p', '{"spec":{"mode":"a"}}');
  assert.notEqual(smp.code, 0);
  assert.match(
    smp.stderr,
    /application\/strategic-merge-patch\+json is not supported by stable\.example\.com\/v2, Kind=CronTab/,
  );
  // v2 (the preferred version) preserves anything; v1's schema bounds replicas
  const bad = await kubectl(
    'patch',
    'crontabs.v1.stable.example.com',
    'nightly',
    '--type=merge',
    '-p',
    '{"spec":{"replicas":50}}',
  );
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /spec\.replicas: Invalid value: 50: spec\.replicas in body should be less than or equal to 10/,
  );

  assert.match(await ok('delete', 'crd', 'crontabs.stable.example.com'), /deleted/);
  const gone = await kubectl('get', 'crontabs.stable.example.com');
  // the stale discovery cache is refreshed: the type is gone from discovery, as on upstream
  assert.deepEqual(
    [gone.code, gone.stdout, gone.stderr],
    [1, '', 'error: the server doesn\'t have a resource type "crontabs"\n'],
  );
});
