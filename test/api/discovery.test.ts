import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type APIResourceDiscovery,
} from '../../src/registry/discovery.js';
import { openapiV2, openapiV3Doc, openapiV3Index } from '../../src/registry/openapi-documents.js';
import { makeIdentity } from '../../src/api/identity.js';
import { Registry } from '../../src/registry/registry.js';
import type { Verb } from '../../src/registry/types.js';

const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const registry = new Registry(makeIdentity());
const noBatch = new Registry(makeIdentity(), 'batch/v1=false');

/** Every `$ref` string anywhere under `node`. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('legacy discovery', () => {
  it('GET /api', () => {
    assert.deepEqual(apiVersions('10.0.0.1:6443'), {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
    });
  });

  it('GET /apis lists the served named groups in upstream order', () => {
    const list = apiGroupList(registry);
    assert.equal(list.kind, 'APIGroupList');
    assert.equal(list.apiVersion, 'v1');
    assert.deepEqual(
      list.groups.slice(0, 2).map((g) => g.name),
      ['apiregistration.plat.io', 'apps'],
    );
    assert.ok(!list.groups.some((g) => g.name === '' || g.name === 'resource.plat.io'));
    assert.deepEqual(
      list.groups.find((g) => g.name === 'autoscaling'),
      {
        name: 'autoscaling',
        versions: [
          { groupVersion: 'autoscaling/v2', version: 'v2' },
          { groupVersion: 'autoscaling/v1', version: 'v1' },
        ],
        preferredVersion: { groupVersion: 'autoscaling/v2', version: 'v2' },
      },
    );
    assert.equal(apiGroupList(registry), list);
  });

  it('GET /apis/<group>', () => {
    assert.deepEqual(apiGroup(registry, 'apps'), {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    assert.equal(apiGroup(registry, 'nope'), undefined);
    assert.equal(apiGroup(noBatch, 'batch'), undefined);
  });

  it('GET /api/v1 lists resources and subresources', () => {
    const list = apiResourceList(registry, '', 'v1');
    assert.ok(list);
    assert.equal(list.groupVersion, 'v1');
    const names = list.resources.map((r) => r.name);
    assert.deepEqual(names, [...names].sort());
    assert.deepEqual(
      list.resources.find((r) => r.name === 'configmaps'),
      {
        name: 'configmaps',
        singularName: 'configmap',
        namespaced: true,
        kind: 'ConfigMap',
        verbs: ALL_VERBS,
        shortNames: ['cm'],
        storageVersionHash: 'qFsyl6wFWjQ=',
      },
    );
    assert.deepEqual(
      list.resources.find((r) => r.name === 'pods/eviction'),
      {
        name: 'pods/eviction',
        singularName: '',
        namespaced: true,
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      },
    );
    assert.equal(list.resources.find((r) => r.name === 'secrets')?.shortNames, undefined);
  });

  it('GET /apis/apps/v1 gives Scale its own group and version', () => {
    const list = apiResourceList(registry, 'apps', 'v1');
    assert.equal(list?.groupVersion, 'apps/v1');
    assert.deepEqual(
      list?.resources.find((r) => r.name === 'deployments/scale'),
      {
        name: 'deployments/scale',
        singularName: '',
        namespaced: true,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      },
    );
    assert.deepEqual(
      list?.resources.find((r) => r.name === 'deployments/status'),
      {
        name: 'deployments/status',
        singularName: '',
        namespaced: true,
        kind: 'Deployment',
        verbs: ['get', 'patch', 'update'],
      },
    );
    assert.deepEqual(list?.resources.find((r) => r.name === 'deployments')?.categories, ['all']);
  });

  it('has no resource list for a disabled group-version', () => {
    assert.equal(apiResourceList(noBatch, 'batch', 'v1'), undefined);
    assert.equal(apiResourceList(registry, 'storage.plat.io', 'v1beta1'), undefined);
  });
});

describe('aggregated discovery', () => {
  it('GET /apis as APIGroupDiscoveryList', () => {
    const list = aggregatedDiscovery(registry, false);
    assert.equal(list.kind, 'APIGroupDiscoveryList');
    assert.equal(list.apiVersion, 'apidiscovery.plat.io/v2');
    assert.deepEqual(list.metadata, {});
    assert.ok(list.items.every((i) => i.metadata.name !== undefined));
    const apps = list.items.find((i) => i.metadata.name === 'apps');
    assert.deepEqual(apps?.metadata, { name: 'apps', creationTimestamp: null });
    assert.equal(apps?.versions[0]?.freshness, 'Current');
    const deployments = apps?.versions[0]?.resources.find((r) => r.resource === 'deployments');
    assert.deepEqual(deployments, {
      resource: 'deployments',
      responseKind: { group: '', version: '', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ALL_VERBS,
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: [
        {
          subresource: 'scale',
          responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
          verbs: ['get', 'patch', 'update'],
        },
        {
          subresource: 'status',
          responseKind: { group: '', version: '', kind: 'Deployment' },
          verbs: ['get', 'patch', 'update'],
        },
      ],
    } satisfies APIResourceDiscovery);
  });

  it('GET /api as APIGroupDiscoveryList holds the core group only', () => {
    const list = aggregatedDiscovery(registry, true);
    assert.equal(list.items.length, 1);
    assert.deepEqual(list.items[0]?.metadata, { creationTimestamp: null });
    const ns = list.items[0]?.versions[0]?.resources.find((r) => r.resource === 'namespaces');
    assert.equal(ns?.scope, 'Cluster');
    assert.ok(list.items[0]?.versions[0]?.resources.some((r) => r.resource === 'configmaps'));
  });

  it('follows the identity domain', () => {
    const r = new Registry(makeIdentity('example.com'));
    const list = aggregatedDiscovery(r, false);
    assert.equal(list.apiVersion, 'apidiscovery.example.com/v2');
    assert.ok(list.items.some((i) => i.metadata.name === 'storage.example.com'));
  });
});

describe('openapi', () => {
  it('v2 keeps only served paths and the definitions they reach', () => {
    const doc = openapiV2(noBatch);
    const paths = Object.keys(doc.paths);
    assert.ok(!paths.some((p) => p.startsWith('/apis/batch/')));
    assert.ok(!paths.some((p) => p.startsWith('/apis/resource.plat.io/')));
    assert.ok(paths.includes('/api/v1/namespaces/{namespace}/configmaps/{name}'));
    assert.ok(paths.includes('/version/'));
    assert.ok(doc.definitions['io.plat.api.core.v1.ConfigMap']);
    assert.equal(doc.definitions['io.plat.api.batch.v1.Job'], undefined);
    for (const ref of refs(doc)) {
      const [, section, name] = ref.split('/') as [string, 'definitions' | 'parameters', string];
      assert.ok((doc[section] as Record<string, unknown>)[name], ref);
    }
    assert.equal(openapiV2(noBatch), doc);
  });

  it('v3 index names each document with its hash', () => {
    const index = openapiV3Index(noBatch);
    assert.match(
      index.paths['apis/apps/v1']?.serverRelativeURL ?? '',
      /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/,
    );
    assert.ok(index.paths['api/v1']);
    assert.equal(index.paths['apis/batch/v1'], undefined);
  });

  it('v3 document holds one group-version with components', () => {
    const doc = openapiV3Doc(registry, 'apis/apps/v1');
    assert.ok(doc);
    assert.equal(doc.openapi, '3.0.0');
    assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/apis/apps/v1/')));
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
    assert.ok(schemas['io.plat.api.apps.v1.Deployment']);
    assert.ok(schemas['io.plat.api.autoscaling.v1.Scale']);
    for (const ref of refs(doc)) {
      assert.ok(ref.startsWith('#/components/schemas/'), ref);
      assert.ok(schemas[ref.slice('#/components/schemas/'.length)], ref);
    }
    const create = (
      doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments'] as Record<string, Record<string, unknown>>
    )['post'];
    assert.ok(create?.['requestBody']);
    assert.equal(openapiV3Doc(registry, 'apis/nope/v1'), undefined);
  });
});

describe('OpenAPI under another API domain', () => {
  it('names the served groups in x-kubernetes-group-version-kind (definitions and operations)', () => {
    const upstream = new Registry(makeIdentity('k8s.io'));
    const doc = openapiV3Doc(upstream, 'apis/certificates.k8s.io/v1')!;
    // upstream's own names under k8s.io (issue 19 item 3)
    const csr = (doc.components as any).schemas['io.k8s.api.certificates.v1.CertificateSigningRequest'];
    assert.equal(csr['x-plat-group-version-kind'], undefined);
    assert.deepEqual(csr['x-kubernetes-group-version-kind'], [
      { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest', version: 'v1' },
    ]);
    const post = (doc.paths as any)['/apis/certificates.k8s.io/v1/certificatesigningrequests'].post;
    assert.deepEqual(post['x-kubernetes-group-version-kind'], {
      group: 'certificates.k8s.io',
      kind: 'CertificateSigningRequest',
      version: 'v1',
    });
    const v2 = openapiV2(upstream) as any;
    assert.deepEqual(
      v2.paths['/apis/certificates.k8s.io/v1/certificatesigningrequests'].post['x-kubernetes-group-version-kind'].group,
      'certificates.k8s.io',
    );
  });
});
