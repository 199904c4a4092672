/** Immutability after creation: one allowed and one refused change per rule, with field path and reason. */
import { test } from 'node:test';
import type { ResourceStrategy } from '../../../src/registry/strategy.js';
import { podStrategy } from '../../../src/registry/strategies/pods.js';
import {
  daemonSetStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
} from '../../../src/registry/strategies/workloads.js';
import { jobStrategy } from '../../../src/registry/strategies/jobs.js';
import { pvcStrategy } from '../../../src/registry/strategies/pvc.js';
import { serviceStrategy } from '../../../src/registry/strategies/services.js';
import { roleBindingStrategy } from '../../../src/registry/strategies/rbac.js';
import { csrStrategy } from '../../../src/registry/strategies/csr.js';
import { check, ctx, prepared, update, type Expect } from './harness.js';
import assert from 'node:assert/strict';

/** [label, strategy, stored object (prepared as on create), change to apply, expected cause] */
type Row = [string, ResourceStrategy, any, (o: any) => void, Expect?];

const IMMUTABLE = 'field is immutable';
const c = (over: any = {}) => ({ name: 'c', image: 'nginx:1', ...over });
const pod = {
  metadata: { name: 'p' },
  spec: { containers: [c()], initContainers: [c({ name: 'init' })], tolerations: [{ key: 'a', operator: 'Exists' }] },
};
const POD_FORBIDDEN: Expect = {
  field: 'spec',
  reason: 'FieldValueForbidden',
  message:
    'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
};

const workload = {
  metadata: { name: 'w' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'a' } },
    template: { metadata: { labels: { app: 'a', v: '1' } }, spec: { containers: [c()] } },
  },
};
const SELECTOR_CHANGE = (o: any) => {
  o.spec.selector = { matchLabels: { app: 'a', v: '1' } };
};
const TEMPLATE_CHANGE = (o: any) => {
  o.spec.template.spec.containers[0].image = 'nginx:2';
};

const job = { metadata: { name: 'j' }, spec: { template: { spec: { containers: [c()], restartPolicy: 'Never' } } } };
const pvc = (phase?: string) => ({
  metadata: { name: 'v' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  ...(phase ? { status: { phase } } : {}),
});
const service = { metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } };
const binding = {
  metadata: { name: 'b' },
  roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'Role', name: 'r' },
  subjects: [],
};

const ROWS: Row[] = [
  [
    'pod: container image',
    podStrategy,
    pod,
    (o) => {
      o.spec.containers[0].image = 'nginx:2';
    },
  ],
  [
    'pod: init container image',
    podStrategy,
    pod,
    (o) => {
      o.spec.initContainers[0].image = 'busybox:2';
    },
  ],
  [
    'pod: activeDeadlineSeconds set',
    podStrategy,
    pod,
    (o) => {
      o.spec.activeDeadlineSeconds = 60;
    },
  ],
  [
    'pod: a toleration added',
    podStrategy,
    pod,
    (o) => {
      o.spec.tolerations.push({ key: 'b', operator: 'Exists' });
    },
  ],
  [
    'pod: a toleration removed',
    podStrategy,
    pod,
    (o) => {
      o.spec.tolerations = [];
    },
    { field: 'spec.tolerations[0]', reason: 'FieldValueForbidden' },
  ],
  [
    'pod: negative grace period set to 1',
    podStrategy,
    { ...pod, spec: { ...pod.spec, terminationGracePeriodSeconds: -1 } },
    (o) => {
      o.spec.terminationGracePeriodSeconds = 1;
    },
  ],
  [
    'pod: grace period changed',
    podStrategy,
    pod,
    (o) => {
      o.spec.terminationGracePeriodSeconds = 5;
    },
    POD_FORBIDDEN,
  ],
  [
    'pod: container renamed',
    podStrategy,
    pod,
    (o) => {
      o.spec.containers[0].name = 'd';
    },
    POD_FORBIDDEN,
  ],
  [
    'pod: nodeName set by a write',
    podStrategy,
    pod,
    (o) => {
      o.spec.nodeName = 'n1';
    },
    POD_FORBIDDEN,
  ],
  [
    'pod: activeDeadlineSeconds raised',
    podStrategy,
    { ...pod, spec: { ...pod.spec, activeDeadlineSeconds: 10 } },
    (o) => {
      o.spec.activeDeadlineSeconds = 20;
    },
    { field: 'spec.activeDeadlineSeconds', reason: 'FieldValueInvalid' },
  ],
  ['deployment: template', deploymentStrategy, workload, TEMPLATE_CHANGE],
  [
    'deployment: selector',
    deploymentStrategy,
    workload,
    SELECTOR_CHANGE,
    { field: 'spec.selector', reason: 'FieldValueInvalid', message: IMMUTABLE },
  ],
  [
    'replicaset: replicas',
    replicaSetStrategy,
    workload,
    (o) => {
      o.spec.replicas = 3;
    },
  ],
  [
    'replicaset: selector',
    replicaSetStrategy,
    workload,
    SELECTOR_CHANGE,
    { field: 'spec.selector', reason: 'FieldValueInvalid', message: IMMUTABLE },
  ],
  [
    'daemonset: template',
    daemonSetStrategy,
    { ...workload, spec: { ...workload.spec, replicas: undefined } },
    TEMPLATE_CHANGE,
  ],
  [
    'daemonset: selector',
    daemonSetStrategy,
    workload,
    SELECTOR_CHANGE,
    { field: 'spec.selector', reason: 'FieldValueInvalid', message: IMMUTABLE },
  ],
  [
    'statefulset: replicas and template',
    statefulSetStrategy,
    workload,
    (o) => {
      o.spec.replicas = 2;
      TEMPLATE_CHANGE(o);
    },
  ],
  // upstream: every StatefulSet spec field outside its list is one Forbidden cause on `spec`
  [
    'statefulset: selector',
    statefulSetStrategy,
    workload,
    SELECTOR_CHANGE,
    { field: 'spec', reason: 'FieldValueForbidden', message: 'updates to statefulset spec for fields other than' },
  ],
  [
    'job: parallelism',
    jobStrategy,
    job,
    (o) => {
      o.spec.parallelism = 2;
    },
  ],
  [
    'job: template',
    jobStrategy,
    job,
    (o) => {
      o.spec.template.spec.containers[0].image = 'nginx:2';
    },
    { field: 'spec.template', reason: 'FieldValueInvalid', message: IMMUTABLE },
  ],
  [
    'job: selector',
    jobStrategy,
    job,
    (o) => {
      o.spec.selector = { matchLabels: { x: 'y' } };
    },
    { field: 'spec.selector', reason: 'FieldValueInvalid', message: IMMUTABLE },
  ],
  [
    'job: suspended, never started: node selector',
    jobStrategy,
    { ...job, spec: { ...job.spec, suspend: true } },
    (o) => {
      o.spec.template.spec.nodeSelector = { zone: 'a' };
    },
  ],
  [
    'pvc: bound claim grows',
    pvcStrategy,
    pvc('Bound'),
    (o) => {
      o.spec.resources.requests.storage = '2Gi';
    },
  ],
  [
    'pvc: bound claim shrinks',
    pvcStrategy,
    pvc('Bound'),
    (o) => {
      o.spec.resources.requests.storage = '512Mi';
    },
    {
      field: 'spec.resources.requests.storage',
      reason: 'FieldValueForbidden',
      message: 'field can not be less than previous value',
    },
  ],
  [
    'pvc: unbound claim resized',
    pvcStrategy,
    pvc(),
    (o) => {
      o.spec.resources.requests.storage = '2Gi';
    },
    {
      field: 'spec',
      reason: 'FieldValueForbidden',
      message: 'spec is immutable after creation except resources.requests',
    },
  ],
  [
    'pvc: access modes',
    pvcStrategy,
    pvc('Bound'),
    (o) => {
      o.spec.accessModes = ['ReadWriteMany'];
    },
    { field: 'spec', reason: 'FieldValueForbidden' },
  ],
  [
    'pvc: first volumeName',
    pvcStrategy,
    pvc(),
    (o) => {
      o.spec.volumeName = 'pv-1';
    },
  ],
  [
    'service: clusterIP omitted is kept',
    serviceStrategy,
    service,
    (o) => {
      delete o.spec.clusterIP;
      delete o.spec.clusterIPs;
    },
  ],
  [
    'service: clusterIP',
    serviceStrategy,
    service,
    (o) => {
      o.spec.clusterIP = '10.0.0.99';
      o.spec.clusterIPs = ['10.0.0.99'];
    },
    {
      field: 'spec.clusterIPs[0]',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: []string{"10.0.0.99"}: may not change once set',
    },
  ],
  [
    'rolebinding: subjects',
    roleBindingStrategy,
    binding,
    (o) => {
      o.subjects = [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.plat.io' }];
    },
  ],
  [
    'rolebinding: roleRef',
    roleBindingStrategy,
    binding,
    (o) => {
      o.roleRef.name = 'other';
    },
    { field: 'roleRef', reason: 'FieldValueInvalid', message: 'cannot change roleRef' },
  ],
];

test('immutability rules: allowed and refused changes', () => {
  for (const [label, s, stored, change, expect] of ROWS) {
    const old = prepared(s, stored);
    if (stored.status) old.status = stored.status; // as the status subresource would have set it
    const next = structuredClone(old);
    change(next);
    check(update(s, old, next), expect, label);
  }
});

test('a CSR spec cannot be changed by an update: the stored spec is kept', () => {
  const old = prepared(csrStrategy, {
    metadata: { name: 'c' },
    spec: { signerName: 'a.io/b', usages: ['client auth'], request: 'x' },
  });
  const next = { ...structuredClone(old), spec: { signerName: 'a.io/other' } };
  csrStrategy.prepareForUpdate(next, old, ctx());
  assert.equal(next.spec.signerName, 'a.io/b');
});
