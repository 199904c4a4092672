/**
 * Defaulting in the strategies, on create and on update: workloads, their pod templates, Pods
 * and priority levels. Go zero values (`""`, `0`) of non-pointer fields count as unset; an
 * explicit zero in a pointer field is kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceStrategy } from '../../../src/registry/strategy.js';
import {
  daemonSetStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  replicationControllerStrategy,
  statefulSetStrategy,
} from '../../../src/registry/strategies/workloads.js';
import { cronJobStrategy, jobStrategy } from '../../../src/registry/strategies/jobs.js';
import { podStrategy } from '../../../src/registry/strategies/pods.js';
import { flowSchemaStrategy, priorityLevelStrategy } from '../../../src/registry/strategies/flowcontrol.js';
import { ctx, prepared } from './harness.js';

const template = () => ({ metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
const get = (o: any, path: string) => path.split('.').reduce((v, k) => v?.[k], o);

// [label, strategy, spec, { path: expected }]: each path is checked after create and after update
const rows: [string, ResourceStrategy, any, Record<string, unknown>][] = [
  [
    'Deployment',
    deploymentStrategy,
    { template: template() },
    {
      replicas: 1,
      progressDeadlineSeconds: 600,
      revisionHistoryLimit: 10,
      'strategy.type': 'RollingUpdate',
      'strategy.rollingUpdate': { maxUnavailable: '25%', maxSurge: '25%' },
      'template.spec.restartPolicy': 'Always',
    },
  ],
  [
    'Deployment keeps explicit zeros of pointer fields',
    deploymentStrategy,
    { replicas: 0, revisionHistoryLimit: 0, strategy: { type: '', rollingUpdate: { maxSurge: 0 } } },
    {
      replicas: 0,
      revisionHistoryLimit: 0,
      'strategy.type': 'RollingUpdate',
      'strategy.rollingUpdate': { maxSurge: 0, maxUnavailable: '25%' },
    },
  ],
  [
    'ReplicaSet',
    replicaSetStrategy,
    { template: template() },
    { replicas: 1, 'template.spec.dnsPolicy': 'ClusterFirst' },
  ],
  [
    'ReplicationController',
    replicationControllerStrategy,
    { template: template() },
    { replicas: 1, selector: { a: 'b' }, 'template.spec.schedulerName': 'default-scheduler' },
  ],
  [
    'StatefulSet',
    statefulSetStrategy,
    { template: template() },
    {
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      revisionHistoryLimit: 10,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    },
  ],
  [
    'StatefulSet OnDelete gets no partition',
    statefulSetStrategy,
    { updateStrategy: { type: 'OnDelete' } },
    { updateStrategy: { type: 'OnDelete' } },
  ],
  [
    'DaemonSet',
    daemonSetStrategy,
    { template: template() },
    {
      revisionHistoryLimit: 10,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      'template.spec.terminationGracePeriodSeconds': 30,
    },
  ],
  [
    'Job',
    jobStrategy,
    { template: template() },
    {
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      'template.spec.securityContext': {},
    },
  ],
  [
    'Job with parallelism only, a pod failure policy and a per-index backoff',
    jobStrategy,
    {
      parallelism: 3,
      backoffLimitPerIndex: 1,
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
    },
    {
      completions: undefined,
      parallelism: 3,
      backoffLimit: 2147483647,
      podReplacementPolicy: 'Failed',
      'podFailurePolicy.rules': [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
    },
  ],
  [
    'CronJob',
    cronJobStrategy,
    { concurrencyPolicy: '', jobTemplate: { spec: { template: template() } } },
    {
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      'jobTemplate.spec.template.spec.containers': [
        {
          name: 'c',
          image: 'nginx:1',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          resources: {},
        },
      ],
      'jobTemplate.spec.completions': undefined,
    },
  ],
];

for (const [label, strategy, spec, expected] of rows) {
  test(`defaults: ${label}`, () => {
    const created = prepared(strategy, { metadata: { name: 'x' }, spec: structuredClone(spec) });
    const updated = { metadata: { name: 'x' }, spec: structuredClone(spec) };
    strategy.prepareForUpdate(updated, created, ctx());
    for (const obj of [created, updated]) {
      for (const [path, value] of Object.entries(expected))
        assert.deepEqual(get(obj.spec, path), value, `${label}: spec.${path}`);
    }
  });
}

test("defaults: a Job without labels takes its template's, the generated ones included", () => {
  const job = prepared(jobStrategy, {
    metadata: { name: 'j' },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  assert.equal(job.metadata.labels['job-name'], 'j');
  assert.deepEqual(job.metadata.labels, job.spec.template.metadata.labels);
  const own = prepared(jobStrategy, { metadata: { name: 'j', labels: { mine: 'y' } }, spec: { template: template() } });
  assert.deepEqual(own.metadata.labels, { mine: 'y' });
});

test('defaults: Pod containers, probes, volumes, requests from limits, host network ports', () => {
  const pod = prepared(podStrategy, {
    metadata: { name: 'p' },
    spec: {
      hostNetwork: true,
      restartPolicy: '',
      dnsPolicy: '',
      containers: [
        {
          name: 'c',
          image: 'r/img@sha256:abc',
          ports: [{ containerPort: 80, protocol: '' }],
          resources: { limits: { memory: '1Gi' }, requests: { cpu: '1' } },
          livenessProbe: { tcpSocket: { port: 80 }, periodSeconds: 0 },
          startupProbe: { httpGet: { port: 1, path: '' } },
        },
      ],
      initContainers: [{ name: 'i', image: 'busybox' }],
      volumes: [
        { name: 'a', configMap: { name: 'x', defaultMode: 0 } },
        { name: 'b', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      ],
    },
  });
  const [c] = pod.spec.containers;
  assert.deepEqual(
    [pod.spec.restartPolicy, pod.spec.dnsPolicy, c.imagePullPolicy, pod.spec.initContainers[0].imagePullPolicy],
    ['Always', 'ClusterFirst', 'IfNotPresent', 'Always'],
  );
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP', hostPort: 80 }]);
  assert.deepEqual(c.resources, { limits: { memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
  assert.deepEqual(c.livenessProbe, {
    tcpSocket: { port: 80 },
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.deepEqual(c.startupProbe.httpGet, { port: 1, path: '/', scheme: 'HTTP' });
  assert.deepEqual(pod.spec.volumes, [
    { name: 'a', configMap: { name: 'x', defaultMode: 0 } },
    {
      name: 'b',
      projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }] },
    },
  ]);
});

test('defaults: priority levels (30 only when unspecified) and flow schemas', () => {
  const plc = (limited: any) =>
    prepared(priorityLevelStrategy, { metadata: { name: 'p' }, spec: { type: 'Limited', limited } }).spec.limited;
  assert.equal(plc({}).nominalConcurrencyShares, 30);
  assert.equal(plc({ nominalConcurrencyShares: 0 }).nominalConcurrencyShares, 0);
  assert.deepEqual(
    plc({ limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 4 } } }).limitResponse.queuing,
    { queues: 64, handSize: 4, queueLengthLimit: 50 },
  );
  const exempt = prepared(priorityLevelStrategy, { metadata: { name: 'e' }, spec: { type: 'Exempt', exempt: {} } }).spec
    .exempt;
  assert.deepEqual(exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 });
  assert.equal(
    prepared(flowSchemaStrategy, { metadata: { name: 'f' }, spec: { matchingPrecedence: 0 } }).spec.matchingPrecedence,
    1000,
  );
  assert.equal(
    prepared(flowSchemaStrategy, { metadata: { name: 'f' }, spec: { matchingPrecedence: 500 } }).spec
      .matchingPrecedence,
    500,
  );
});
