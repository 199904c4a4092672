/**
 * CRD status conditions operators read, under --api-domain k8s.io: NamesAccepted and
 * Established, and KubernetesAPIApprovalPolicyConformant for protected groups (`*.k8s.io`,
 * `*.kubernetes.io`), whose CRDs need the `api-approved.kubernetes.io` annotation.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/poll.js';

let s: TestServer;
const API = 'apiextensions.k8s.io';
const CRDS = `/apis/${API}/v1/customresourcedefinitions`;
const ANNOTATION = 'api-approved.kubernetes.io';

const crd = (group: string, plural: string, annotations?: Record<string, string>) => ({
  apiVersion: `${API}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${group}`, ...(annotations ? { annotations } : {}) },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

const conditions = async (name: string) =>
  until(async () => {
    const c = (await request(s.url, 'GET', `${CRDS}/${name}`)).json?.status?.conditions;
    return c?.some((x: any) => x.type === 'Established')
      ? Object.fromEntries(c.map((x: any) => [x.type, [x.status, x.reason, x.message]]))
      : undefined;
  }, `conditions of ${name}`);

before(async () => {
  s = await startServer(['--api-domain', 'k8s.io']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('a protected group without the approval annotation, or with an invalid one, is 422', async () => {
  const missing = await request(s.url, 'POST', CRDS, crd('widgets.k8s.io', 'widgets'));
  assert.equal(missing.status, 422, missing.text);
  assert.deepEqual(missing.json.details.causes, [
    {
      reason: 'FieldValueRequired',
      field: `metadata.annotations[${ANNOTATION}]`,
      message: `Required value: protected groups must have approval annotation "${ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    },
  ]);
  const bad = await request(s.url, 'POST', CRDS, crd('x.kubernetes.io', 'widgets', { [ANNOTATION]: 'bad value' }));
  assert.equal(bad.status, 422, bad.text);
  assert.equal(
    bad.json.details.causes[0].message,
    `Invalid value: "bad value": protected groups must have approval annotation "${ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  );
});

test('KubernetesAPIApprovalPolicyConformant: True for a URL, False for "unapproved", absent elsewhere', async () => {
  const url = 'https://github.com/kubernetes/kubernetes/pull/79724';
  assert.equal(
    (await request(s.url, 'POST', CRDS, crd('widgets.k8s.io', 'widgets', { [ANNOTATION]: url }))).status,
    201,
  );
  assert.equal(
    (await request(s.url, 'POST', CRDS, crd('gadgets.k8s.io', 'gadgets', { [ANNOTATION]: 'unapproved, experimental' })))
      .status,
    201,
  );
  assert.equal((await request(s.url, 'POST', CRDS, crd('example.com', 'things'))).status, 201);
  const approved = await conditions('widgets.widgets.k8s.io');
  assert.deepEqual(approved.KubernetesAPIApprovalPolicyConformant, [
    'True',
    'ApprovedAnnotation',
    `approved in ${url}`,
  ]);
  assert.deepEqual(approved.NamesAccepted, ['True', 'NoConflicts', 'no conflicts found']);
  assert.deepEqual(approved.Established, ['True', 'InitialNamesAccepted', 'the initial names have been accepted']);
  const bypassed = await conditions('gadgets.gadgets.k8s.io');
  assert.deepEqual(bypassed.KubernetesAPIApprovalPolicyConformant, [
    'False',
    'UnapprovedAnnotation',
    'not approved: "unapproved, experimental"',
  ]);
  const other = await conditions('things.example.com');
  assert.equal(other.KubernetesAPIApprovalPolicyConformant, undefined);
});
