/**
 * The ValidatingAdmissionPolicy plugin in process: what the mutation sample (seed 27) found
 * untested: which requests are exempt (the admission configuration objects of the served
 * admissionregistration group, not look-alikes of another group) and when `namespaceObject` is
 * set. The end-to-end cases are in validating-policy.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidatingPolicyPlugin } from '../../src/admission/validating-policy.js';
import type { AdmissionAttributes } from '../../src/admission/attributes.js';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { ReadCache } from '../../src/actors/read-cache.js';
import { StatusError } from '../../src/api/status.js';
import { makeIdentity } from '../../src/api/identity.js';
import { attributes } from './helpers.js';

/** A read cache holding one Namespace, `ns`, labelled team=a. */
const readCache = {
  get: (typeKey: string, namespace: string, name: string) =>
    typeKey === '/namespaces' && namespace === '' && name === 'ns'
      ? JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { team: 'a' } } })
      : undefined,
} as unknown as ReadCache;

const event = (typeKey: string, name: string, obj: unknown): ChangeEvent => ({
  typeKey,
  type: 'ADDED',
  rv: 1,
  namespace: '',
  name,
  json: JSON.stringify(obj),
  labels: {},
  fields: {},
  apiVersion: 'admissionregistration.plat.io/v1',
  uid: name,
});

/** A plugin with policy `p` (every group and resource, CREATE; `validation`) bound with Deny. */
function plugin(domain: string, validation: string): ValidatingPolicyPlugin {
  const group = `admissionregistration.${domain}`;
  const p = new ValidatingPolicyPlugin(makeIdentity(domain), readCache);
  p.observe([
    event(`${group}/validatingadmissionpolicies`, 'p', {
      metadata: { name: 'p' },
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }],
        },
        validations: [{ expression: validation }],
      },
    }),
    event(`${group}/validatingadmissionpolicybindings`, 'b', {
      metadata: { name: 'b' },
      spec: { policyName: 'p', validationActions: ['Deny'] },
    }),
  ]);
  return p;
}

function create(group: string, resource: string, namespace: string, namespaced: boolean): AdmissionAttributes {
  return attributes({
    group,
    resource,
    kind: { group, version: 'v1', kind: 'Thing' },
    namespace,
    namespaced,
    object: { apiVersion: group ? `${group}/v1` : 'v1', kind: 'Thing', metadata: { name: 'x' } },
  });
}

const ADMISSION_CONFIG = [
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
];

test('the admission configuration objects of the served group are exempt; the same names in another group are not', () => {
  for (const domain of ['plat.io', 'k8s.io']) {
    const p = plugin(domain, 'false');
    for (const resource of ADMISSION_CONFIG) {
      assert.equal(p.handles(create(`admissionregistration.${domain}`, resource, '', false)), false, resource);
      assert.equal(p.handles(create('example.com', resource, '', false)), true, `example.com ${resource}`);
    }
    assert.equal(p.handles(create(`admissionregistration.${domain}`, 'things', '', false)), true);
    assert.equal(p.handles(create('', 'configmaps', 'ns', true)), true);
  }
});

test('namespaceObject is the request namespace for namespaced resources, null for cluster-scoped ones', () => {
  const ns = plugin('plat.io', 'namespaceObject != null && namespaceObject.metadata.labels.team == "a"');
  ns.validate(create('', 'configmaps', 'ns', true));
  const none = plugin('plat.io', 'namespaceObject == null');
  none.validate(create('example.com', 'widgets', '', false));
  // a cluster-scoped request naming a namespace (upstream's Namespace objects carry their own
  // name as namespace): still null
  none.validate(create('', 'namespaces', 'ns', false));
  assert.throws(
    () => none.validate(create('', 'configmaps', 'ns', true)),
    (e: unknown) =>
      e instanceof StatusError &&
      e.status.code === 422 &&
      e.status.message ===
        "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: namespaceObject == null",
  );
});
