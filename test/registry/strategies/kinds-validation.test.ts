/** Validation of Services, RBAC, Ingress, webhook configurations, CSRs, Events and PDBs: one valid and one invalid case per rule. */
import { test } from 'node:test';
import type { ResourceStrategy } from '../../../src/registry/strategy.js';
import { serviceStrategy } from '../../../src/registry/strategies/services.js';
import {
  clusterRoleBindingStrategy,
  clusterRoleStrategy,
  roleBindingStrategy,
  roleStrategy,
} from '../../../src/registry/strategies/rbac.js';
import { ingressStrategy } from '../../../src/registry/strategies/ingress.js';
import { mutatingWebhookStrategy, validatingWebhookStrategy } from '../../../src/registry/strategies/webhooks.js';
import { csrStrategy } from '../../../src/registry/strategies/csr.js';
import { eventStrategy } from '../../../src/registry/strategies/events.js';
import { pdbStrategy } from '../../../src/registry/strategies/pdb.js';
import { check, create, type Expect } from './harness.js';
import { ALICE_CSR, b64, tampered } from '../../fixtures/csr.js';

type Row = [string, ResourceStrategy, any, Expect?];

const svc = (ports: any[], extra: any = {}) => ({
  kind: 'Service',
  metadata: { name: 's' },
  spec: { ports, ...extra },
});
const SERVICE: Row[] = [
  ['one unnamed port', serviceStrategy, svc([{ port: 80 }])],
  [
    'port required (0)',
    serviceStrategy,
    svc([{ targetPort: 80 }]),
    {
      field: 'spec.ports[0].port',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: 0: must be between 1 and 65535, inclusive',
    },
  ],
  [
    'port above range',
    serviceStrategy,
    svc([{ port: 65536 }]),
    { field: 'spec.ports[0].port', reason: 'FieldValueInvalid' },
  ],
  [
    'two named ports',
    serviceStrategy,
    svc([
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ]),
  ],
  [
    'names required with several ports',
    serviceStrategy,
    svc([{ name: 'http', port: 80 }, { port: 443 }]),
    { field: 'spec.ports[1].name', reason: 'FieldValueRequired' },
  ],
  [
    'names unique',
    serviceStrategy,
    svc([
      { name: 'a', port: 80 },
      { name: 'a', port: 81 },
    ]),
    { field: 'spec.ports[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"' },
  ],
  [
    'protocol UDP and SCTP',
    serviceStrategy,
    svc([
      { name: 'a', port: 53, protocol: 'UDP' },
      { name: 'b', port: 53, protocol: 'SCTP' },
    ]),
  ],
  [
    'protocol known',
    serviceStrategy,
    svc([{ port: 80, protocol: 'HTTP' }]),
    {
      field: 'spec.ports[0].protocol',
      reason: 'FieldValueNotSupported',
      message: 'supported values: "SCTP", "TCP", "UDP"',
    },
  ],
  [
    'port+protocol unique',
    serviceStrategy,
    svc([
      { name: 'a', port: 80 },
      { name: 'b', port: 80 },
    ]),
    { field: 'spec.ports[1]', reason: 'FieldValueDuplicate' },
  ],
  ['ports required', serviceStrategy, svc([]), { field: 'spec.ports', reason: 'FieldValueRequired' }],
  [
    'type known',
    serviceStrategy,
    svc([{ port: 80 }], { type: 'Magic' }),
    { field: 'spec.type', reason: 'FieldValueNotSupported' },
  ],
  [
    'nodePort only with NodePort/LoadBalancer',
    serviceStrategy,
    svc([{ port: 80, nodePort: 30001 }]),
    { field: 'spec.ports[0].nodePort', reason: 'FieldValueForbidden' },
  ],
  [
    'ExternalName needs externalName',
    serviceStrategy,
    svc([], { type: 'ExternalName' }),
    { field: 'spec.externalName', reason: 'FieldValueRequired' },
  ],
  [
    'clusterIP a valid IP',
    serviceStrategy,
    svc([{ port: 80 }], { clusterIP: '10.0.0.300' }),
    { field: 'spec.clusterIPs[0]', reason: 'FieldValueInvalid' },
  ],
];

const rule = (r: any) => ({ metadata: { name: 'r' }, rules: [r] });
const ref = (
  roleRef: any,
  subjects: any[] = [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.plat.io' }],
) => ({ metadata: { name: 'b' }, roleRef, subjects });
const REF = { apiGroup: 'rbac.authorization.plat.io', kind: 'Role', name: 'r' };
const RBAC: Row[] = [
  ['resource rule', roleStrategy, rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })],
  [
    'verbs required',
    roleStrategy,
    rule({ apiGroups: [''], resources: ['pods'] }),
    {
      field: 'rules[0].verbs',
      reason: 'FieldValueRequired',
      message: 'Required value: verbs must contain at least one value',
    },
  ],
  [
    'resources required',
    roleStrategy,
    rule({ verbs: ['get'], apiGroups: [''] }),
    { field: 'rules[0].resources', reason: 'FieldValueRequired' },
  ],
  ['non-resource URLs in a ClusterRole', clusterRoleStrategy, rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] })],
  [
    'non-resource URLs not in a Role',
    roleStrategy,
    rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }),
    {
      field: 'rules[0].nonResourceURLs',
      reason: 'FieldValueInvalid',
      message: 'namespaced rules cannot apply to non-resource URLs',
    },
  ],
  [
    'not both resources and URLs',
    clusterRoleStrategy,
    rule({ verbs: ['get'], resources: ['pods'], nonResourceURLs: ['/x'] }),
    { field: 'rules[0].nonResourceURLs', reason: 'FieldValueInvalid' },
  ],
  ['RoleBinding to a Role', roleBindingStrategy, ref(REF)],
  ['RoleBinding to a ClusterRole', roleBindingStrategy, ref({ ...REF, kind: 'ClusterRole' })],
  [
    'roleRef.kind Role or ClusterRole',
    roleBindingStrategy,
    ref({ ...REF, kind: 'User' }),
    { field: 'roleRef.kind', reason: 'FieldValueNotSupported', message: 'supported values: "Role", "ClusterRole"' },
  ],
  [
    'roleRef.apiGroup the RBAC group',
    roleBindingStrategy,
    ref({ ...REF, apiGroup: 'rbac.authorization.k8s.io' }),
    { field: 'roleRef.apiGroup', reason: 'FieldValueNotSupported' },
  ],
  [
    'ClusterRoleBinding only to ClusterRoles',
    clusterRoleBindingStrategy,
    ref(REF),
    { field: 'roleRef.kind', reason: 'FieldValueNotSupported' },
  ],
  [
    'subject kind known',
    roleBindingStrategy,
    ref(REF, [{ kind: 'Robot', name: 'x' }]),
    { field: 'subjects[0].kind', reason: 'FieldValueNotSupported' },
  ],
  [
    'ServiceAccount subject of a ClusterRoleBinding needs a namespace',
    clusterRoleBindingStrategy,
    ref({ ...REF, kind: 'ClusterRole' }, [{ kind: 'ServiceAccount', name: 'sa' }]),
    { field: 'subjects[0].namespace', reason: 'FieldValueRequired' },
  ],
];

const backend = { service: { name: 'web', port: { number: 80 } } };
const ing = (path: any) => ({
  metadata: { name: 'i' },
  spec: { rules: [{ host: 'example.com', http: { paths: [{ backend, ...path }] } }] },
});
const INGRESS: Row[] = [
  ['Prefix absolute path', ingressStrategy, ing({ path: '/api', pathType: 'Prefix' })],
  [
    'pathType required',
    ingressStrategy,
    ing({ path: '/' }),
    {
      field: 'spec.rules[0].http.paths[0].pathType',
      reason: 'FieldValueRequired',
      message: 'pathType must be specified',
    },
  ],
  [
    'pathType known',
    ingressStrategy,
    ing({ path: '/', pathType: 'Regex' }),
    {
      field: 'spec.rules[0].http.paths[0].pathType',
      reason: 'FieldValueNotSupported',
      message: 'supported values: "Exact", "ImplementationSpecific", "Prefix"',
    },
  ],
  [
    'Exact path starts with /',
    ingressStrategy,
    ing({ path: 'api', pathType: 'Exact' }),
    { field: 'spec.rules[0].http.paths[0].path', reason: 'FieldValueInvalid', message: 'must be an absolute path' },
  ],
  [
    'Prefix path without //',
    ingressStrategy,
    ing({ path: '/a//b', pathType: 'Prefix' }),
    { field: 'spec.rules[0].http.paths[0].path', reason: 'FieldValueInvalid', message: "must not contain '//'" },
  ],
  ['ImplementationSpecific may omit the path', ingressStrategy, ing({ pathType: 'ImplementationSpecific' })],
  [
    'backend port required',
    ingressStrategy,
    ing({ path: '/', pathType: 'Prefix', backend: { service: { name: 'web' } } }),
    { field: 'spec.rules[0].http.paths[0].backend.service.port', reason: 'FieldValueRequired' },
  ],
  [
    'rules or defaultBackend',
    ingressStrategy,
    { metadata: { name: 'i' }, spec: {} },
    { field: 'spec.rules', reason: 'FieldValueInvalid' },
  ],
];

const hook = (over: any = {}) => ({
  name: 'a.example.com',
  clientConfig: { url: 'https://x.example.com' },
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...over,
});
const whc = (...webhooks: any[]) => ({ metadata: { name: 'w' }, webhooks });
const WEBHOOKS: Row[] = [
  ['complete v1 webhook', validatingWebhookStrategy, whc(hook())],
  ['NoneOnDryRun', mutatingWebhookStrategy, whc(hook({ sideEffects: 'NoneOnDryRun' }))],
  [
    'sideEffects required',
    validatingWebhookStrategy,
    whc(hook({ sideEffects: undefined })),
    {
      field: 'webhooks[0].sideEffects',
      reason: 'FieldValueRequired',
      message: 'Required value: must specify one of None, NoneOnDryRun',
    },
  ],
  [
    'sideEffects None or NoneOnDryRun',
    mutatingWebhookStrategy,
    whc(hook({ sideEffects: 'Some' })),
    { field: 'webhooks[0].sideEffects', reason: 'FieldValueNotSupported' },
  ],
  [
    'admissionReviewVersions required',
    validatingWebhookStrategy,
    whc(hook({ admissionReviewVersions: [] })),
    {
      field: 'webhooks[0].admissionReviewVersions',
      reason: 'FieldValueRequired',
      message: 'must specify one of v1, v1beta1',
    },
  ],
  [
    'a known admissionReviewVersion',
    validatingWebhookStrategy,
    whc(hook({ admissionReviewVersions: ['v2'] })),
    { field: 'webhooks[0].admissionReviewVersions', reason: 'FieldValueInvalid' },
  ],
  [
    'names unique',
    validatingWebhookStrategy,
    whc(hook(), hook()),
    { field: 'webhooks[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a.example.com"' },
  ],
  ['distinct names', mutatingWebhookStrategy, whc(hook(), hook({ name: 'b.example.com' }))],
];

const PEM = b64(ALICE_CSR);
/** the request with the last byte of its signature flipped */
const TAMPERED = b64(tampered(ALICE_CSR));
const csr = (over: any = {}) => ({
  metadata: { name: 'c' },
  spec: { request: PEM, signerName: 'platform.io/kube-apiserver-client', usages: ['client auth'], ...over },
});
const CSR: Row[] = [
  ['complete CSR', csrStrategy, csr()],
  [
    'signerName required',
    csrStrategy,
    csr({ signerName: undefined }),
    { field: 'spec.signerName', reason: 'FieldValueRequired' },
  ],
  [
    'legacy signer refused',
    csrStrategy,
    csr({ signerName: 'platform.io/legacy-unknown' }),
    {
      field: 'spec.signerName',
      reason: 'FieldValueInvalid',
      message: 'the legacy signerName is not allowed via this API version',
    },
  ],
  ['usages required', csrStrategy, csr({ usages: [] }), { field: 'spec.usages', reason: 'FieldValueRequired' }],
  [
    'usages without duplicates',
    csrStrategy,
    csr({ usages: ['client auth', 'client auth'] }),
    { field: 'spec.usages[1]', reason: 'FieldValueDuplicate' },
  ],
  [
    'known usages',
    csrStrategy,
    csr({ usages: ['flying'] }),
    { field: 'spec.usages[0]', reason: 'FieldValueNotSupported' },
  ],
  [
    'request a PEM CSR',
    csrStrategy,
    csr({ request: Buffer.from('hello').toString('base64') }),
    { field: 'spec.request', reason: 'FieldValueInvalid', message: 'PEM block type must be CERTIFICATE REQUEST' },
  ],
  [
    'request well-formed',
    csrStrategy,
    csr({
      request: b64(
        '-----BEGIN CERTIFICATE REQUEST-----\nMIIBAzCBqgIBADAPMQ0wCwYDVQQDDAR0ZXN0\n-----END CERTIFICATE REQUEST-----\n',
      ),
    }),
    { field: 'spec.request', reason: 'FieldValueInvalid', message: 'x509: malformed certificate request' },
  ],
  [
    'request signed by its key',
    csrStrategy,
    csr({ request: TAMPERED }),
    { field: 'spec.request', reason: 'FieldValueInvalid', message: 'x509: ECDSA verification failure' },
  ],
  [
    'expirationSeconds at least 600',
    csrStrategy,
    csr({ expirationSeconds: 599 }),
    { field: 'spec.expirationSeconds', reason: 'FieldValueInvalid' },
  ],
  ['expirationSeconds 600', csrStrategy, csr({ expirationSeconds: 600 })],
];

const ev = (over: any = {}) => ({
  apiVersion: 'events.plat.io/v1',
  kind: 'Event',
  metadata: { name: 'e' },
  eventTime: '2025-01-01T00:00:00.000000Z',
  reportingController: 'platform.io/test',
  reportingInstance: 'i-1',
  action: 'Bind',
  reason: 'Scheduled',
  type: 'Normal',
  ...over,
});
const EVENTS: Row[] = [
  ['complete v1 event', eventStrategy, ev()],
  [
    'reportingController required',
    eventStrategy,
    ev({ reportingController: undefined }),
    { field: 'reportingController', reason: 'FieldValueRequired' },
  ],
  [
    'reportingInstance required',
    eventStrategy,
    ev({ reportingInstance: '' }),
    { field: 'reportingInstance', reason: 'FieldValueRequired' },
  ],
  ['action required', eventStrategy, ev({ action: undefined }), { field: 'action', reason: 'FieldValueRequired' }],
  ['reason required', eventStrategy, ev({ reason: undefined }), { field: 'reason', reason: 'FieldValueRequired' }],
  [
    'eventTime required',
    eventStrategy,
    ev({ eventTime: undefined }),
    { field: 'eventTime', reason: 'FieldValueRequired' },
  ],
  [
    'type Normal or Warning',
    eventStrategy,
    ev({ type: 'Info' }),
    { field: 'type', reason: 'FieldValueInvalid', message: 'has invalid value: Info' },
  ],
  [
    'deprecated fields unset',
    eventStrategy,
    ev({ deprecatedCount: 3 }),
    { field: 'count', reason: 'FieldValueInvalid', message: 'needs to be unset' },
  ],
  [
    'core v1 events keep the lenient rules',
    eventStrategy,
    { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, reason: 'X' },
  ],
];

const pdb = (spec: any) => ({ metadata: { name: 'p' }, spec: { selector: { matchLabels: { app: 'a' } }, ...spec } });
const PDB: Row[] = [
  ['minAvailable alone', pdbStrategy, pdb({ minAvailable: 1 })],
  ['maxUnavailable percent', pdbStrategy, pdb({ maxUnavailable: '50%' })],
  [
    'not both',
    pdbStrategy,
    pdb({ minAvailable: 1, maxUnavailable: 1 }),
    { field: 'spec', reason: 'FieldValueInvalid', message: 'minAvailable and maxUnavailable cannot be both set' },
  ],
  [
    'percent at most 100%',
    pdbStrategy,
    pdb({ minAvailable: '150%' }),
    { field: 'spec.minAvailable', reason: 'FieldValueInvalid', message: 'must not be greater than 100%' },
  ],
  [
    'int non-negative',
    pdbStrategy,
    pdb({ maxUnavailable: -1 }),
    { field: 'spec.maxUnavailable', reason: 'FieldValueInvalid' },
  ],
];

for (const [group, rows] of Object.entries({ SERVICE, RBAC, INGRESS, WEBHOOKS, CSR, EVENTS, PDB })) {
  test(`${group} validation rules`, () => {
    for (const [label, s, obj, expect] of rows) check(create(s, obj), expect, label);
  });
}
