import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../src/api/identity.js';
import { RESOURCES } from '../../src/registry/generated/resources.js';
import { Registry, compareVersions } from '../../src/registry/registry.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const identity = makeIdentity();
const registry = new Registry(identity);
const versionsOf = (r: Registry, group: string): string[] | undefined => r.group(group)?.versions;

describe('generated RESOURCES', () => {
  it('is sorted by group, version, resource', () => {
    const keys = RESOURCES.map((r) => [r.group, r.version, r.resource].join('\u0000'));
    assert.deepEqual(keys, [...keys].sort());
    assert.equal(new Set(keys).size, keys.length);
  });

  it('holds every resource of every version, alpha and beta included', () => {
    assert.equal(RESOURCES.length, 80);
    assert.ok(RESOURCES.some((r) => r.stability === 'alpha'));
    assert.ok(RESOURCES.some((r) => r.stability === 'beta'));
    for (const r of RESOURCES) assert.ok(r.verbs.length > 0, `${r.group}/${r.version}/${r.resource} has verbs`);
  });
});

describe('Registry resources', () => {
  it('serves configmaps as a namespaced core v1 resource with all verbs', () => {
    const cm = registry.lookup('', 'v1', 'configmaps');
    assert.ok(cm);
    assert.equal(cm.namespaced, true);
    assert.equal(cm.kind, 'ConfigMap');
    assert.equal(cm.listKind, 'ConfigMapList');
    assert.equal(cm.singularName, 'configmap');
    assert.equal(cm.definition, 'io.plat.api.core.v1.ConfigMap');
    assert.equal(cm.stability, 'stable');
    assert.deepEqual(cm.verbs, ALL_VERBS);
    assert.deepEqual(cm.shortNames, ['cm']);
  });

  it('serves namespaces cluster-scoped, with finalize and status', () => {
    const ns = registry.lookup('', 'v1', 'namespaces');
    assert.ok(ns);
    assert.equal(ns.namespaced, false);
    assert.deepEqual(ns.shortNames, ['ns']);
    assert.deepEqual(
      ns.subresources.map((s) => [s.name, s.verbs]),
      [
        ['finalize', ['update']],
        ['status', ['get', 'patch', 'update']],
      ],
    );
  });

  it('gives deployments status and scale subresources', () => {
    const d = registry.lookup('apps', 'v1', 'deployments');
    assert.ok(d);
    assert.deepEqual(d.categories, ['all']);
    assert.deepEqual(d.shortNames, ['deploy']);
    assert.deepEqual(d.subresources, [
      { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] },
      { name: 'status', kind: 'Deployment', group: 'apps', version: 'v1', verbs: ['get', 'patch', 'update'] },
    ]);
  });

  it('derives pod subresource verbs from connect operations', () => {
    const pods = registry.lookup('', 'v1', 'pods');
    const verbs = Object.fromEntries(pods!.subresources.map((s) => [s.name, s.verbs]));
    assert.deepEqual(verbs['exec'], ['create', 'get']);
    assert.deepEqual(verbs['proxy'], ['create', 'delete', 'get', 'patch', 'update']);
    assert.deepEqual(verbs['log'], ['get']);
    const eviction = pods!.subresources.find((s) => s.name === 'eviction');
    assert.deepEqual(eviction, {
      name: 'eviction',
      kind: 'Eviction',
      group: 'policy',
      version: 'v1',
      verbs: ['create'],
    });
  });

  it('includes create-only virtual resources', () => {
    for (const [group, resource] of [
      ['authentication.plat.io', 'tokenreviews'],
      ['authentication.plat.io', 'selfsubjectreviews'],
      ['authorization.plat.io', 'subjectaccessreviews'],
      ['', 'bindings'],
    ] as const) {
      assert.deepEqual(registry.lookup(group, 'v1', resource)?.verbs, ['create'], resource);
    }
    assert.equal(registry.lookup('authorization.plat.io', 'v1', 'localsubjectaccessreviews')?.namespaced, true);
  });

  it('lists componentstatuses without watch', () => {
    assert.deepEqual(registry.lookup('', 'v1', 'componentstatuses')?.verbs, ['get', 'list']);
  });

  it('finds resources by kind', () => {
    assert.equal(registry.byKind('apps', 'v1', 'Deployment')?.resource, 'deployments');
    assert.equal(registry.byKind('', 'v1', 'Namespace')?.resource, 'namespaces');
    assert.equal(registry.byKind('apps', 'v1', 'Nope'), undefined);
  });

  it('returns the enabled resources of a group-version', () => {
    assert.deepEqual(
      registry.resourcesFor('batch', 'v1').map((r) => r.resource),
      ['cronjobs', 'jobs'],
    );
    assert.deepEqual(registry.resourcesFor('batch', 'v9'), []);
    assert.equal(registry.allEnabled().length, 59);
    assert.equal(registry.allDefs().length, RESOURCES.length);
  });
});

describe('Registry enablement', () => {
  it('serves stable versions only by default', () => {
    assert.ok(registry.allEnabled().every((r) => r.stability === 'stable'));
    assert.equal(registry.lookup('storage.plat.io', 'v1beta1', 'volumeattributesclasses'), undefined);
    assert.equal(registry.group('resource.plat.io'), undefined);
    assert.equal(registry.isServed('storage.plat.io', 'v1alpha1'), false);
  });

  it('orders groups as upstream, core first, and picks the preferred version', () => {
    const names = registry.groups().map((g) => g.name);
    assert.deepEqual(names.slice(0, 4), ['', 'apiregistration.plat.io', 'apps', 'events.plat.io']);
    assert.deepEqual(registry.group('autoscaling'), {
      name: 'autoscaling',
      versions: ['v2', 'v1'],
      preferredVersion: 'v2',
    });
  });

  it('disables a group-version with batch/v1=false', () => {
    const r = new Registry(identity, 'batch/v1=false');
    assert.equal(r.lookup('batch', 'v1', 'jobs'), undefined);
    assert.equal(r.group('batch'), undefined);
    assert.ok(r.lookup('apps', 'v1', 'deployments'));
  });

  it('enables one beta resource, and a version without a value', () => {
    const r = new Registry(identity, 'storage.plat.io/v1beta1/volumeattributesclasses, networking.plat.io/v1beta1');
    assert.equal(r.lookup('storage.plat.io', 'v1beta1', 'volumeattributesclasses')?.kind, 'VolumeAttributesClass');
    assert.deepEqual(versionsOf(r, 'storage.plat.io'), ['v1', 'v1beta1']);
    assert.equal(r.group('storage.plat.io')?.preferredVersion, 'v1');
    assert.ok(r.lookup('networking.plat.io', 'v1beta1', 'servicecidrs'));
    assert.equal(r.lookup('storage.plat.io', 'v1alpha1', 'volumeattributesclasses'), undefined);
  });

  it('lets a resource key override its version key', () => {
    const r = new Registry(identity, 'networking.plat.io/v1beta1=true,networking.plat.io/v1beta1/ipaddresses=false');
    assert.equal(r.lookup('networking.plat.io', 'v1beta1', 'ipaddresses'), undefined);
    assert.ok(r.lookup('networking.plat.io', 'v1beta1', 'servicecidrs'));
  });

  it('applies api/all, api/beta and api/alpha with specific keys taking precedence', () => {
    const beta = new Registry(identity, 'api/beta=true');
    assert.ok(beta.allEnabled().some((r) => r.stability === 'beta'));
    assert.ok(beta.allEnabled().every((r) => r.stability !== 'alpha'));
    const alpha = new Registry(identity, 'api/alpha=true');
    assert.deepEqual(versionsOf(alpha, 'resource.plat.io'), ['v1alpha3']);
    const all = new Registry(identity, 'api/all=true');
    assert.equal(all.allEnabled().length, RESOURCES.length);
    const none = new Registry(identity, 'api/all=false,batch/v1=true');
    assert.deepEqual(
      none.groups().map((g) => g.name),
      ['batch'],
    );
  });

  it('accepts v1, api/v1 and api/v1/<resource> for the core group', () => {
    assert.equal(new Registry(identity, 'v1=false').group(''), undefined);
    assert.equal(new Registry(identity, 'api/v1=false').lookup('', 'v1', 'pods'), undefined);
    const r = new Registry(identity, 'api/v1/configmaps=false');
    assert.equal(r.lookup('', 'v1', 'configmaps'), undefined);
    assert.ok(r.lookup('', 'v1', 'pods'));
  });

  it('rejects invalid entries with exact messages', () => {
    const cases: [string, string][] = [
      ['batch/v9', 'unknown group version "batch/v9" in "batch/v9"'],
      ['nope.io/v1=true', 'unknown group "nope.io" in "nope.io/v1"'],
      ['batch/v1=maybe', 'invalid value "maybe" for "batch/v1": must be true or false'],
      ['batch/v1/widgets', 'unknown resource "widgets" in "batch/v1"'],
      [
        'storage.plat.io/v1beta1/csistoragecapacities',
        'unknown resource "csistoragecapacities" in "storage.plat.io/v1beta1"',
      ],
      ['a/b/c/d', 'invalid key "a/b/c/d"'],
      ['batch', 'invalid key "batch"'],
    ];
    for (const [config, problem] of cases) {
      assert.throws(() => new Registry(identity, config), { message: `--runtime-config: ${problem}` }, config);
    }
  });
});

describe('Registry identity', () => {
  const other = makeIdentity('example.com');
  const r = new Registry(other, 'storage.example.com/v1beta1');

  it('renames groups in the reference domain', () => {
    assert.ok(r.lookup('storage.example.com', 'v1', 'storageclasses'));
    assert.equal(r.lookup('storage.plat.io', 'v1', 'storageclasses'), undefined);
    assert.ok(r.lookup('apps', 'v1', 'deployments'));
    assert.ok(r.lookup('storage.example.com', 'v1beta1', 'volumeattributesclasses'));
    const token = r.lookup('', 'v1', 'serviceaccounts')?.subresources.find((s) => s.name === 'token');
    assert.equal(token?.group, 'authentication.example.com');
  });

  it('validates runtime-config against the served names', () => {
    assert.throws(() => new Registry(other, 'storage.plat.io/v1beta1'), {
      message: '--runtime-config: unknown group "storage.plat.io" in "storage.plat.io/v1beta1"',
    });
  });
});

describe('compareVersions', () => {
  it('orders stable, then beta, then alpha, higher numbers first', () => {
    const sorted = ['v1alpha1', 'v1beta1', 'v2', 'v1', 'v2beta2', 'v2beta1', 'v1alpha3', 'foo'].sort(compareVersions);
    assert.deepEqual(sorted, ['v2', 'v1', 'v2beta2', 'v2beta1', 'v1beta1', 'v1alpha3', 'v1alpha1', 'foo']);
  });
});
