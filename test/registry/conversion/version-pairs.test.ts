/**
 * Issue 8 item 3: every resource served in two versions round-trips through both. An object
 * written through one version reads back through the other, a read-modify-write through the
 * other version keeps every field, and the object is stored once (one resourceVersion, one
 * uid, listed once in each version). HorizontalPodAutoscaler (real conversion) and Events
 * have their own suites (versions.test.ts, events.test.ts).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--runtime-config', 'api/all=true']);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

interface Pair {
  group: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  versions: [string, string];
  body: Record<string, unknown>;
}

const PAIRS: Pair[] = [
  {
    group: 'admissionregistration.plat.io',
    resource: 'validatingadmissionpolicies',
    kind: 'ValidatingAdmissionPolicy',
    namespaced: false,
    versions: ['v1', 'v1beta1'],
    body: {
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        validations: [{ expression: 'object.metadata.name != "x"', message: 'no x' }],
      },
    },
  },
  {
    group: 'admissionregistration.plat.io',
    resource: 'validatingadmissionpolicybindings',
    kind: 'ValidatingAdmissionPolicyBinding',
    namespaced: false,
    versions: ['v1', 'v1beta1'],
    body: { spec: { policyName: 'p', validationActions: ['Deny', 'Audit'] } },
  },
  {
    group: 'resource.plat.io',
    resource: 'deviceclasses',
    kind: 'DeviceClass',
    namespaced: false,
    versions: ['v1alpha3', 'v1beta1'],
    body: { spec: { selectors: [{ cel: { expression: 'device.driver == "d.example.com"' } }] } },
  },
  {
    group: 'resource.plat.io',
    resource: 'resourceclaims',
    kind: 'ResourceClaim',
    namespaced: true,
    versions: ['v1alpha3', 'v1beta1'],
    body: {
      spec: {
        devices: { requests: [{ name: 'gpu', deviceClassName: 'gpus', allocationMode: 'ExactCount', count: 1 }] },
      },
    },
  },
  {
    group: 'resource.plat.io',
    resource: 'resourceclaimtemplates',
    kind: 'ResourceClaimTemplate',
    namespaced: true,
    versions: ['v1alpha3', 'v1beta1'],
    body: {
      spec: {
        spec: {
          devices: { requests: [{ name: 'gpu', deviceClassName: 'gpus', allocationMode: 'ExactCount', count: 1 }] },
        },
      },
    },
  },
  {
    group: 'resource.plat.io',
    resource: 'resourceslices',
    kind: 'ResourceSlice',
    namespaced: false,
    versions: ['v1alpha3', 'v1beta1'],
    body: {
      spec: {
        driver: 'd.example.com',
        nodeName: 'n1',
        pool: { name: 'p', generation: 1, resourceSliceCount: 1 },
        devices: [{ name: 'dev0', basic: { attributes: { model: { string: 'x1' } } } }],
      },
    },
  },
  {
    group: 'storage.plat.io',
    resource: 'volumeattributesclasses',
    kind: 'VolumeAttributesClass',
    namespaced: false,
    versions: ['v1alpha1', 'v1beta1'],
    body: { driverName: 'd.example.com', parameters: { iops: '3000' } },
  },
];

const path = (p: Pair, v: string, name?: string) =>
  `/apis/${p.group}/${v}${p.namespaced ? '/namespaces/default' : ''}/${p.resource}${name ? `/${name}` : ''}`;
const strip = (o: any) => {
  const { apiVersion: _a, metadata: _m, ...rest } = o;
  return rest;
};

for (const p of PAIRS) {
  for (const [from, to] of [p.versions, [p.versions[1], p.versions[0]]] as [string, string][]) {
    test(`${p.resource}: written through ${from}, read and rewritten through ${to}, unchanged through ${from}`, async () => {
      const name = `rt-${from}-${to}`.toLowerCase();
      const created = await request(s.url, 'POST', path(p, from), {
        apiVersion: `${p.group}/${from}`,
        kind: p.kind,
        metadata: { name, labels: { a: 'b' } },
        ...p.body,
      });
      assert.equal(created.status, 201, created.text);
      const other = await request(s.url, 'GET', path(p, to, name));
      assert.equal(other.status, 200, other.text);
      assert.equal(other.json.apiVersion, `${p.group}/${to}`);
      assert.equal(other.json.metadata.uid, created.json.metadata.uid, 'one stored object');
      assert.deepEqual(strip(other.json), strip(created.json), 'the same fields in both versions');
      // a read-modify-write through the other version keeps everything
      other.json.metadata.labels.c = 'd';
      const put = await request(s.url, 'PUT', path(p, to, name), other.json);
      assert.equal(put.status, 200, put.text);
      const back = await request(s.url, 'GET', path(p, from, name));
      assert.equal(back.json.apiVersion, `${p.group}/${from}`);
      assert.deepEqual(strip(back.json), strip(created.json));
      assert.deepEqual(back.json.metadata.labels, { a: 'b', c: 'd' });
      assert.equal(back.json.metadata.resourceVersion, put.json.metadata.resourceVersion);
      for (const v of p.versions) {
        const list = await request(s.url, 'GET', path(p, v));
        assert.equal(
          list.json.items.filter((i: any) => i.metadata.name === name).length,
          1,
          `listed once through ${v}`,
        );
      }
    });
  }
}
