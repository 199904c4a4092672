/**
 * Discovery over HTTP: legacy documents (/api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>),
 * aggregated discovery negotiation, /version, OpenAPI v2 and v3, and --runtime-config.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServers, stopServers, request, type TestServer } from '../helpers/server.js';

const AGGREGATED = 'application/json;g=apidiscovery.plat.io;v=v2;as=APIGroupDiscoveryList';

let s: TestServer;
let noBatch: TestServer;
before(async () => {
  [s, noBatch] = await startServers([], ['--runtime-config', 'batch/v1=false']);
});
after(() => stopServers([s, noBatch]));

const resource = (list: any, name: string) => list.resources.find((r: any) => r.name === name);

test('/api is APIVersions with v1 and the server address', async () => {
  const r = await request(s.url, 'GET', '/api');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(r.json.kind, 'APIVersions');
  assert.deepEqual(r.json.versions, ['v1']);
  assert.equal(r.json.serverAddressByClientCIDRs.length, 1);
  assert.equal(r.json.serverAddressByClientCIDRs[0].clientCIDR, '0.0.0.0/0');
  // the address clients can reach the server at: the bound port, not the requested port 0
  assert.equal(r.json.serverAddressByClientCIDRs[0].serverAddress, `127.0.0.1:${s.port}`);
});

test('/apis is APIGroupList of named groups with renamed identifiers', async () => {
  const r = await request(s.url, 'GET', '/apis');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'APIGroupList');
  assert.equal(r.json.apiVersion, 'v1');
  const names: string[] = r.json.groups.map((g: any) => g.name);
  assert.ok(!names.includes(''), 'the core group is not listed under /apis');
  for (const g of ['apps', 'batch', 'rbac.authorization.plat.io', 'coordination.plat.io'])
    assert.ok(names.includes(g), g);
  for (const g of names) assert.ok(!g.endsWith('k8s.io'), `upstream group name leaked: ${g}`);
  assert.equal(new Set(names).size, names.length, 'groups are unique');
  const apps = r.json.groups.find((g: any) => g.name === 'apps');
  assert.deepEqual(apps.preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });
  assert.ok(apps.versions.some((v: any) => v.groupVersion === 'apps/v1' && v.version === 'v1'));
});

test('/apis/apps is one APIGroup; unknown groups and versions are 404 Status', async () => {
  const r = await request(s.url, 'GET', '/apis/apps');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'APIGroup');
  assert.equal(r.json.apiVersion, 'v1');
  assert.equal(r.json.name, 'apps');
  assert.equal(r.json.preferredVersion.groupVersion, 'apps/v1');
  for (const p of ['/apis/nope.plat.io', '/apis/apps/v9', '/api/v2']) {
    const n = await request(s.url, 'GET', p);
    assert.equal(n.status, 404, p);
    assert.equal(n.json.kind, 'Status');
    assert.equal(n.json.code, 404);
    assert.equal(n.json.reason, 'NotFound');
  }
});

test('/api/v1 is the core APIResourceList', async () => {
  const r = await request(s.url, 'GET', '/api/v1');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'APIResourceList');
  assert.equal(r.json.groupVersion, 'v1');
  const cm = resource(r.json, 'configmaps');
  assert.equal(cm.kind, 'ConfigMap');
  assert.equal(cm.singularName, 'configmap');
  assert.equal(cm.namespaced, true);
  assert.deepEqual(cm.shortNames, ['cm']);
  for (const v of ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'])
    assert.ok(cm.verbs.includes(v), v);
  const ns = resource(r.json, 'namespaces');
  assert.equal(ns.namespaced, false);
  assert.deepEqual(ns.shortNames, ['ns']);
  const podStatus = resource(r.json, 'pods/status');
  assert.ok(podStatus, 'pods/status subresource is listed');
  assert.equal(podStatus.kind, 'Pod');
  assert.ok(resource(r.json, 'pods').categories.includes('all'));
});

test('/apis/apps/v1 lists deployments and their scale subresource', async () => {
  const r = await request(s.url, 'GET', '/apis/apps/v1');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'APIResourceList');
  assert.equal(r.json.groupVersion, 'apps/v1');
  const d = resource(r.json, 'deployments');
  assert.equal(d.kind, 'Deployment');
  assert.equal(d.namespaced, true);
  assert.deepEqual(d.shortNames, ['deploy']);
  assert.ok(d.categories.includes('all'));
  const scale = resource(r.json, 'deployments/scale');
  assert.ok(scale, 'deployments/scale is listed');
  assert.equal(scale.kind, 'Scale');
  assert.equal(scale.group, 'autoscaling');
  assert.equal(scale.version, 'v1');
});

test('aggregated discovery is served for the apidiscovery.plat.io v2 media type', async () => {
  const r = await request(s.url, 'GET', '/apis', undefined, { accept: AGGREGATED });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), AGGREGATED);
  assert.match(r.headers.get('vary') ?? '', /Accept/i);
  assert.equal(r.json.kind, 'APIGroupDiscoveryList');
  assert.equal(r.json.apiVersion, 'apidiscovery.plat.io/v2');
  const apps = r.json.items.find((i: any) => i.metadata.name === 'apps');
  assert.ok(apps, 'apps group is present');
  const v1 = apps.versions.find((v: any) => v.version === 'v1');
  assert.equal(v1.freshness, 'Current');
  const dep = v1.resources.find((x: any) => x.resource === 'deployments');
  assert.equal(dep.scope, 'Namespaced');
  assert.equal(dep.singularResource, 'deployment');
  assert.equal(dep.responseKind.kind, 'Deployment');
  assert.ok(dep.subresources.some((sr: any) => sr.subresource === 'scale'));

  const core = await request(s.url, 'GET', '/api', undefined, { accept: AGGREGATED });
  assert.equal(core.status, 200);
  assert.equal(core.headers.get('content-type'), AGGREGATED);
  assert.equal(core.json.kind, 'APIGroupDiscoveryList');
  assert.equal(core.json.items.length, 1);
  const cm = core.json.items[0].versions[0].resources.find((x: any) => x.resource === 'configmaps');
  assert.equal(cm.scope, 'Namespaced');
  assert.ok(
    core.json.items[0].versions[0].resources.some((x: any) => x.resource === 'namespaces' && x.scope === 'Cluster'),
  );
});

test('the upstream discovery group falls back to the next acceptable type, or 406 without one', async () => {
  const upstream = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
  const r = await request(s.url, 'GET', '/apis', undefined, { accept: `${upstream},application/json` });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal(r.json.kind, 'APIGroupList');
  const only = await request(s.url, 'GET', '/apis', undefined, { accept: upstream });
  assert.equal(only.status, 406);
  assert.equal(only.json.kind, 'Status');
  assert.equal(only.json.reason, 'NotAcceptable');
  // aggregated discovery is only a representation of /api and /apis
  const gv = await request(s.url, 'GET', '/apis/apps/v1', undefined, { accept: `${AGGREGATED},application/json` });
  assert.equal(gv.status, 200);
  assert.equal(gv.json.kind, 'APIResourceList');
});

test('/version reports 1.32', async () => {
  const r = await request(s.url, 'GET', '/version');
  assert.equal(r.status, 200);
  assert.equal(r.json.major, '1');
  assert.equal(r.json.minor, '32');
  assert.match(r.json.gitVersion, /^v1\.32\./);
  assert.equal(typeof r.json.platform, 'string');
});

test('/openapi/v2 has paths and definitions under renamed identifiers', async () => {
  const r = await request(s.url, 'GET', '/openapi/v2');
  assert.equal(r.status, 200);
  assert.equal(r.json.swagger, '2.0');
  assert.ok(r.json.paths['/api/v1/namespaces/{namespace}/configmaps'], 'configmaps path');
  assert.ok(r.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments'], 'deployments path');
  assert.ok(r.json.definitions['io.plat.api.core.v1.ConfigMap'], 'ConfigMap definition');
  assert.ok(r.json.definitions['io.plat.api.apps.v1.Deployment'], 'Deployment definition');
  assert.ok(!JSON.stringify(Object.keys(r.json.definitions)).includes('io.k8s.'), 'no upstream definition names');
});

test('/openapi/v3 index points at per-group documents', async () => {
  const idx = await request(s.url, 'GET', '/openapi/v3');
  assert.equal(idx.status, 200);
  const apps = idx.json.paths['apis/apps/v1'];
  assert.ok(apps, 'apis/apps/v1 is in the index');
  assert.match(apps.serverRelativeURL, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]+$/);
  assert.ok(idx.json.paths['api/v1'], 'api/v1 is in the index');
  const doc = await request(s.url, 'GET', apps.serverRelativeURL);
  assert.equal(doc.status, 200);
  assert.equal(doc.json.openapi, '3.0.0');
  assert.ok(doc.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments'], 'deployments path');
  assert.ok(!Object.keys(doc.json.paths).some((p) => p.startsWith('/api/v1/')), "only the group-version's own paths");
  assert.ok(doc.json.components.schemas['io.plat.api.apps.v1.Deployment'], 'Deployment schema');
  const missing = await request(s.url, 'GET', '/openapi/v3/apis/nope.plat.io/v1');
  assert.equal(missing.status, 404);
});

test('--runtime-config batch/v1=false stops serving batch/v1 everywhere', async () => {
  for (const p of [
    '/apis/batch/v1',
    '/apis/batch',
    '/apis/batch/v1/namespaces/default/jobs',
    '/openapi/v3/apis/batch/v1',
  ]) {
    const r = await request(noBatch.url, 'GET', p);
    assert.equal(r.status, 404, p);
  }
  const list = await request(noBatch.url, 'GET', '/apis');
  assert.ok(!list.json.groups.some((g: any) => g.name === 'batch'));
  assert.ok(
    list.json.groups.some((g: any) => g.name === 'apps'),
    'other groups stay',
  );
  const agg = await request(noBatch.url, 'GET', '/apis', undefined, { accept: AGGREGATED });
  assert.ok(!agg.json.items.some((i: any) => i.metadata.name === 'batch'));
  assert.ok(!agg.text.includes('"jobs"'), 'jobs are not in aggregated discovery');
  const idx = await request(noBatch.url, 'GET', '/openapi/v3');
  assert.ok(!idx.json.paths['apis/batch/v1']);
  // the default server still serves it
  const on = await request(s.url, 'GET', '/apis/batch/v1');
  assert.equal(on.status, 200);
  assert.ok(resource(on.json, 'jobs'), 'jobs served by default');
  assert.ok(resource(on.json, 'cronjobs'), 'cronjobs served by default');
});
