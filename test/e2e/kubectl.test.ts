/**
 * The real kubectl (v1.32) against the server: discovery-driven commands, create -f of a
 * multi-document manifest, get with output formats and selectors, delete, and raw health.
 * KUBECONFIG=/dev/null and a private --cache-dir keep the user's configuration out.
 * (`kubectl create configmap` is not used: that generator sends protobuf, not served yet.)
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { kubectlRunner } from '../helpers/kubectl.js';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';

const FIXTURE = resolve(process.cwd(), 'test/fixtures/web-stack.yaml');

let s: TestServer;
let cacheDir: string;

const { kubectl, ok } = kubectlRunner(
  () => s.url,
  () => cacheDir,
  30_000,
  () => cacheDir,
);

const lines = (out: string) => out.trimEnd().split('\n');
const firstColumn = (out: string) =>
  lines(out)
    .slice(1)
    .map((l) => l.split(/\s+/)[0]);

before(async () => {
  s = await startServer();
  cacheDir = mkdtempSync(join(tmpdir(), 'plat-kubectl-'));
});
after(async () => {
  if (s) {
    await s.stop();
    s.cleanup();
  }
  rmSync(cacheDir, { recursive: true, force: true });
});

// The tests below are steps of one scenario, as upstream's test/cmd functions are: run them in order
// (the file runs alone; a single step alone has nothing to work on).
describe('kubectl against the server, a scenario in order (each step uses the objects of the steps before it)', () => {
  test('get ns lists the bootstrap namespaces', async () => {
    const out = await ok('get', 'ns');
    assert.match(lines(out)[0]!, /^NAME\s+/);
    const names = firstColumn(out);
    for (const n of ['default', 'plat-system', 'plat-public', 'plat-node-lease'])
      assert.ok(names.includes(n), `${n} in\n${out}`);
    const byName = await ok('get', 'ns', '-o', 'name');
    assert.ok(lines(byName).includes('namespace/plat-system'));
  });

  test('api-resources shows short names, versions and scopes', async () => {
    const out = await ok('api-resources');
    assert.match(out, /^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m);
    assert.match(out, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(out, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    const apps = await ok('api-resources', '--api-group', 'apps', '-o', 'name');
    assert.ok(lines(apps).includes('deployments.apps'), apps);
  });

  test('api-versions lists v1 and apps/v1', async () => {
    const versions = lines(await ok('api-versions'));
    assert.ok(versions.includes('v1'));
    assert.ok(versions.includes('apps/v1'));
    assert.ok(versions.includes('rbac.authorization.plat.io/v1'));
    assert.ok(!versions.some((v) => v.includes('k8s.io')), 'no upstream group names');
  });

  test('create -f creates a ConfigMap, Secret, Service, Pod and Deployment from one file', async () => {
    const out = await ok('create', '-f', FIXTURE);
    assert.deepEqual(lines(out), [
      'configmap/web-config created',
      'secret/web-secret created',
      'service/web created',
      'pod/web-pod created',
      'deployment.apps/web created',
    ]);
    const again = await kubectl('create', '-f', FIXTURE);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /AlreadyExists|already exists/);
    assert.equal(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}'), '2');
    assert.equal(await ok('get', 'svc', 'web', '-o', 'jsonpath={.spec.ports[0].port}'), '80');
  });

  test('get cm <name> -o json and -o yaml', async () => {
    const json = JSON.parse(await ok('get', 'cm', 'web-config', '-o', 'json'));
    assert.equal(json.kind, 'ConfigMap');
    assert.equal(json.apiVersion, 'v1');
    assert.equal(json.metadata.name, 'web-config');
    assert.equal(json.metadata.namespace, 'default');
    assert.deepEqual(json.metadata.labels, { app: 'web' });
    assert.deepEqual(json.data, { greeting: 'hello', port: '8080' });
    const yaml = parseYaml(await ok('get', 'cm', 'web-config', '-o', 'yaml'));
    assert.equal(yaml.kind, 'ConfigMap');
    assert.equal(yaml.metadata.uid, json.metadata.uid);
    assert.equal(yaml.metadata.resourceVersion, json.metadata.resourceVersion);
    assert.deepEqual(yaml.data, json.data);
  });

  test('metadata.generation is set only for kinds that track spec changes', async () => {
    // upstream strategies set generation for Deployments (and other spec-bearing workload kinds),
    // never for ConfigMaps, Secrets, Services or (in v1.32) Pods
    assert.equal(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.metadata.generation}'), '1');
    for (const [kind, name] of [
      ['cm', 'web-config'],
      ['secret', 'web-secret'],
      ['svc', 'web'],
      ['po', 'web-pod'],
    ]) {
      const obj = JSON.parse(await ok('get', kind!, name!, '-o', 'json'));
      assert.equal(
        obj.metadata.generation,
        undefined,
        `${kind}/${name} has metadata.generation ${obj.metadata.generation}`,
      );
    }
  });

  test('a Secret created with stringData is stored as base64 data', async () => {
    const secret = JSON.parse(await ok('get', 'secret', 'web-secret', '-o', 'json'));
    assert.equal(secret.type, 'Opaque');
    assert.equal(secret.data?.password, Buffer.from('s3cret').toString('base64'));
    assert.equal(secret.stringData, undefined, 'stringData is write-only');
  });

  test('get cm -l app=web selects by label', async () => {
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('unlabelled'))).status,
      201,
    );
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('other-app', { app: 'db' })))
        .status,
      201,
    );
    const out = await ok('get', 'cm', '-l', 'app=web');
    assert.match(lines(out)[0]!, /^NAME\s+/);
    assert.deepEqual(firstColumn(out), ['web-config']);
    const all = firstColumn(await ok('get', 'cm'));
    for (const n of ['web-config', 'unlabelled', 'other-app']) assert.ok(all.includes(n), n);
    assert.deepEqual(lines(await ok('get', 'cm', '-l', 'app in (db,web)', '-o', 'name')), [
      'configmap/other-app',
      'configmap/web-config',
    ]);
  });

  test('get po --field-selector status.phase=Pending', async () => {
    const out = await ok('get', 'po', '--field-selector', 'status.phase=Pending');
    assert.deepEqual(firstColumn(out), ['web-pod']);
    const running = await kubectl('get', 'po', '--field-selector', 'status.phase=Running');
    assert.equal(running.code, 0);
    assert.equal(running.stdout, '');
    assert.match(running.stderr, /No resources found in default namespace\./);
    const bad = await kubectl('get', 'po', '--field-selector', 'spec.bogus=1');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /BadRequest|field label not supported/);
  });

  test('delete cm <name>, then delete cm --all', async () => {
    assert.match(await ok('delete', 'cm', 'web-config'), /^configmap "web-config" deleted$/m);
    const gone = await kubectl('get', 'cm', 'web-config');
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /NotFound.*configmaps "web-config" not found/);
    const out = await ok('delete', 'cm', '--all');
    assert.match(out, /^configmap "unlabelled" deleted$/m);
    assert.match(out, /^configmap "other-app" deleted$/m);
    const none = await kubectl('get', 'cm');
    assert.equal(none.code, 0);
    assert.match(none.stderr, /No resources found in default namespace\./);
    // other kinds are untouched
    assert.deepEqual(firstColumn(await ok('get', 'secret')), ['web-secret']);
  });

  test("get --raw '/readyz?verbose'", async () => {
    const out = await ok('get', '--raw', '/readyz?verbose');
    assert.ok(lines(out).includes('[+]ping ok'), out);
    assert.ok(lines(out).includes('[+]shutdown ok'), out);
    assert.match(out, /readyz check passed/);
    assert.equal((await ok('get', '--raw', '/livez')).trim(), 'ok');
  });
});
