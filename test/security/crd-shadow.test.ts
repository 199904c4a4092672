/**
 * A CRD must not shadow RBAC (issue 18, item 10): a CustomResourceDefinition in a group the
 * server serves itself is 422 whatever its annotations, so `clusterrolebindings` v9 objects
 * never exist, never feed the authorizer and never become discovery's preferred version;
 * upstream's protected groups (here plat.io/platform.io; k8s.io/kubernetes.io under
 * `--api-domain k8s.io`) need the api-approved annotation. Plus the in-process guards for CRDs
 * stored before the rule: the registry and the CRD controller never serve them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { crdGroupCauses } from '../../src/registry/crd/crd-groups.js';
import { Registry } from '../../src/registry/registry.js';
import { makeIdentity } from '../../src/api/identity.js';
import type { CustomType } from '../../src/registry/crd/types.js';

const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';
let s: TokenServer;
let tls: TlsClient;

before(async () => {
  s = await startTokenServer('mallory-token,mallory,uid-m\n');
  tls = s.tls;
});
after(async () => {
  await s?.close();
});

function crd(plural: string, group: string, kind: string, version: string, annotations?: Record<string, string>) {
  return {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, ...(annotations ? { annotations } : {}) },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural, kind },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

test('a CRD in the RBAC group is 422 (with or without approval), and v9 bindings never grant', async () => {
  for (const annotations of [undefined, { 'api-approved.platform.io': 'unapproved, testing' }]) {
    const r = await plain(
      s.url,
      'POST',
      CRDS,
      crd('clusterrolebindings', 'rbac.authorization.plat.io', 'ClusterRoleBinding', 'v9', annotations),
    );
    assert.equal(r.status, 422, r.text);
    assert.equal(
      r.json.message,
      'CustomResourceDefinition.apiextensions.plat.io "clusterrolebindings.rbac.authorization.plat.io" is invalid: ' +
        'spec.group: Invalid value: "rbac.authorization.plat.io": may not be a group served by the API server itself',
    );
  }
  const v9 = await plain(s.url, 'POST', '/apis/rbac.authorization.plat.io/v9/clusterrolebindings', {
    apiVersion: 'rbac.authorization.plat.io/v9',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'mallory-admin' },
    roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'User', name: 'mallory' }],
  });
  assert.equal(v9.status, 404, v9.text);
  const secrets = await request(s.secureUrl, tls, 'GET', '/api/v1/secrets', undefined, {
    authorization: 'Bearer mallory-token',
  });
  assert.equal(secrets.status, 403, secrets.text);
  const group = await plain(s.url, 'GET', '/apis/rbac.authorization.plat.io');
  assert.deepEqual(
    group.json.versions.map((v: any) => v.version),
    ['v1'],
  );
  assert.equal(group.json.preferredVersion.version, 'v1');
  // a core kind's group (apps) too
  const apps = await plain(s.url, 'POST', CRDS, crd('deployments', 'apps', 'Deployment', 'v2'));
  assert.equal(apps.status, 422, apps.text);
});

test('protected groups need the api-approved annotation: a URL or a reason starting with "unapproved"', async () => {
  const group = 'snapshot.storage.plat.io';
  const missing = await plain(s.url, 'POST', CRDS, crd('snaps', group, 'Snap', 'v1'));
  assert.equal(missing.status, 422, missing.text);
  assert.equal(
    missing.json.message,
    `CustomResourceDefinition.apiextensions.plat.io "snaps.${group}" is invalid: metadata.annotations[api-approved.platform.io]: ` +
      'Required value: protected groups must have approval annotation "api-approved.platform.io", see https://github.com/kubernetes/enhancements/pull/1111',
  );
  const bad = await plain(
    s.url,
    'POST',
    CRDS,
    crd('snaps', group, 'Snap', 'v1', { 'api-approved.platform.io': 'yes please' }),
  );
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.details.causes, [
    {
      reason: 'FieldValueInvalid',
      field: 'metadata.annotations[api-approved.platform.io]',
      message:
        'Invalid value: "yes please": protected groups must have approval annotation "api-approved.platform.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
    },
  ]);
  const ok = await plain(
    s.url,
    'POST',
    CRDS,
    crd('snaps', group, 'Snap', 'v1', { 'api-approved.platform.io': 'https://example.com/pr/1' }),
  );
  assert.equal(ok.status, 201, ok.text);
  const bypassed = await plain(
    s.url,
    'POST',
    CRDS,
    crd('clips', 'platform.io', 'Clip', 'v1', { 'api-approved.platform.io': 'unapproved, experimental' }),
  );
  assert.equal(bypassed.status, 201, bypassed.text);
  const other = await plain(s.url, 'POST', CRDS, crd('widgets', 'example.com', 'Widget', 'v1'));
  assert.equal(other.status, 201, other.text);
  // dropping the approval of a stored CRD is refused
  const stored = (await plain(s.url, 'GET', `${CRDS}/snaps.${group}`)).json;
  delete stored.metadata.annotations;
  const dropped = await plain(s.url, 'PUT', `${CRDS}/snaps.${group}`, stored);
  assert.equal(dropped.status, 422, dropped.text);
});

test('under --api-domain k8s.io: the upstream names', () => {
  const k8s = (group: string, annotations?: Record<string, string>) =>
    crdGroupCauses({ metadata: { annotations }, spec: { group } }, 'k8s.io');
  assert.deepEqual(
    k8s('rbac.authorization.k8s.io').map((c) => c.field),
    ['spec.group'],
  );
  assert.deepEqual(
    k8s('gateway.networking.k8s.io').map((c) => c.field),
    ['metadata.annotations[api-approved.kubernetes.io]'],
  );
  assert.deepEqual(k8s('x.kubernetes.io', { 'api-approved.kubernetes.io': 'unapproved' }), []);
  assert.deepEqual(k8s('stable.example.com'), []);
  assert.deepEqual(k8s('rbac.authorization.plat.io'), [], 'plat.io is just another domain there');
});

test('a CRD stored before the rule is never served in a built-in group', () => {
  const registry = new Registry(makeIdentity());
  const shadow = {
    crd: 'clusterrolebindings.rbac.authorization.plat.io',
    group: 'rbac.authorization.plat.io',
    plural: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    kind: 'ClusterRoleBinding',
    listKind: 'ClusterRoleBindingList',
    shortNames: [],
    categories: [],
    namespaced: false,
    storageVersion: 'v9',
    versions: [
      { name: 'v9', served: true, storage: true, schema: { type: 'object' }, status: false, printerColumns: [] },
    ],
  } as unknown as CustomType;
  registry.setCustom([shadow]);
  assert.equal(registry.lookup('rbac.authorization.plat.io', 'v9', 'clusterrolebindings'), undefined);
  assert.deepEqual(registry.customTypes(), []);
  assert.deepEqual(registry.group('rbac.authorization.plat.io')?.versions, ['v1']);
});
