/** Validation of Pods and pod templates (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job): one valid and one invalid case per rule. */
import { test } from 'node:test';
import type { ResourceStrategy } from '../../../src/registry/strategy.js';
import { podStrategy } from '../../../src/registry/strategies/pods.js';
import {
  daemonSetStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
} from '../../../src/registry/strategies/workloads.js';
import { cronJobStrategy, jobStrategy } from '../../../src/registry/strategies/jobs.js';
import { check, create, prepared, type Expect } from './harness.js';
import assert from 'node:assert/strict';

const pod = (containers: any[], extra: any = {}) => ({
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers, ...extra },
});
const c = (over: any = {}) => ({ name: 'c', image: 'nginx:1', ...over });
const res = (resources: any) => pod([c({ resources })]);

const POD_ROWS: [string, any, Expect?][] = [
  ['container name present', pod([c()])],
  [
    'container name required',
    pod([{ image: 'i' }]),
    { field: 'spec.containers[0].name', reason: 'FieldValueRequired', message: 'Required value' },
  ],
  ['container names distinct', pod([c(), c({ name: 'd' })])],
  [
    'container names unique',
    pod([c(), c()]),
    { field: 'spec.containers[1].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "c"' },
  ],
  [
    'init container names unique among all',
    pod([c()], { initContainers: [c()] }),
    { field: 'spec.initContainers[0].name', reason: 'FieldValueDuplicate' },
  ],
  [
    'container name a DNS label',
    pod([c({ name: 'Bad_Name' })]),
    { field: 'spec.containers[0].name', reason: 'FieldValueInvalid', message: 'RFC 1123 label' },
  ],
  ['containers required', pod([]), { field: 'spec.containers', reason: 'FieldValueRequired' }],
  ['containerPort in range', pod([c({ ports: [{ containerPort: 65535 }] })])],
  [
    'containerPort above range',
    pod([c({ ports: [{ containerPort: 70000 }] })]),
    {
      field: 'spec.containers[0].ports[0].containerPort',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: 70000: must be between 1 and 65535, inclusive',
    },
  ],
  [
    'containerPort required',
    pod([c({ ports: [{ name: 'http' }] })]),
    { field: 'spec.containers[0].ports[0].containerPort', reason: 'FieldValueRequired' },
  ],
  ['same port, other protocol', pod([c({ ports: [{ containerPort: 53 }, { containerPort: 53, protocol: 'UDP' }] })])],
  [
    'containerPort+protocol unique',
    pod([c({ ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP' }] })]),
    { field: 'spec.containers[0].ports[1]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "80/TCP"' },
  ],
  [
    'port names unique',
    pod([
      c({
        ports: [
          { name: 'a', containerPort: 1 },
          { name: 'a', containerPort: 2 },
        ],
      }),
    ]),
    { field: 'spec.containers[0].ports[1].name', reason: 'FieldValueDuplicate' },
  ],
  [
    'protocol known',
    pod([c({ ports: [{ containerPort: 1, protocol: 'ICMP' }] })]),
    {
      field: 'spec.containers[0].ports[0].protocol',
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    },
  ],
  [
    'quantities parse: 100m, 1Gi, 0.5, 1e3, 2',
    res({ limits: { cpu: '1e3', memory: '1Gi' }, requests: { cpu: '100m', memory: 0.5, 'ephemeral-storage': 2 } }),
  ],
  // an unparseable quantity is refused by decoding (400, test/registry/strategies/quantity.test.ts), not validation
  ['quantity unparseable: left to decoding', res({ limits: { cpu: 'abc' }, requests: { memory: '1Kii' } })],
  [
    'quantity negative',
    res({ requests: { cpu: '-1' } }),
    {
      field: 'spec.containers[0].resources.requests[cpu]',
      reason: 'FieldValueInvalid',
      message: 'must be greater than or equal to 0',
    },
  ],
  [
    'request above limit',
    res({ limits: { cpu: '500m' }, requests: { cpu: '1' } }),
    {
      field: 'spec.containers[0].resources.requests',
      reason: 'FieldValueInvalid',
      message: 'must be less than or equal to cpu limit of 500m',
    },
  ],
  [
    'restartPolicy known',
    pod([c()], { restartPolicy: 'Sometimes' }),
    { field: 'spec.restartPolicy', reason: 'FieldValueNotSupported' },
  ],
];

test('Pod validation rules', () => {
  for (const [label, obj, expect] of POD_ROWS) check(create(podStrategy, obj), expect, label);
});

test('Pod defaults: protocol TCP, pull policy from the tag, QoS class from resources', () => {
  const p = prepared(
    podStrategy,
    pod([
      c({ image: 'reg:5000/app', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1', memory: '1Gi' } } }),
      c({
        name: 'd',
        image: 'x:1.2',
        resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } },
      }),
    ]),
  );
  assert.equal(p.spec.containers[0].ports[0].protocol, 'TCP');
  assert.equal(p.spec.containers[0].imagePullPolicy, 'Always');
  assert.equal(p.spec.containers[1].imagePullPolicy, 'IfNotPresent');
  assert.equal(p.status.qosClass, 'Guaranteed');
  assert.equal(prepared(podStrategy, res({ requests: { cpu: '1' } })).status.qosClass, 'Burstable');
  assert.equal(prepared(podStrategy, pod([c()])).status.qosClass, 'BestEffort');
});

const template = (labels: any, spec: any = { containers: [c()] }) => ({ metadata: { labels }, spec });
const workload = (selector: any, labels: any = { app: 'a' }, extra: any = {}) => ({
  metadata: { name: 'w' },
  spec: { selector, template: template(labels), ...extra },
});
const MISMATCH: Expect = {
  field: 'spec.template.metadata.labels',
  reason: 'FieldValueInvalid',
  message: 'Invalid value: map[string]string{"app":"a"}: `selector` does not match template `labels`',
};

const WORKLOAD_ROWS: [string, any, Expect?][] = [
  ['selector matches template', workload({ matchLabels: { app: 'a' } })],
  ['selector expression matches', workload({ matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] })],
  ['selector required', workload(undefined), { field: 'spec.selector', reason: 'FieldValueRequired' }],
  ['selector must match template labels', workload({ matchLabels: { app: 'b' } }), MISMATCH],
  [
    'empty selector refused',
    workload({}),
    { field: 'spec.selector', reason: 'FieldValueInvalid', message: 'empty selector is invalid for' },
  ],
  [
    'In needs values',
    workload({ matchExpressions: [{ key: 'app', operator: 'In' }] }),
    { field: 'spec.selector.matchExpressions[0].values', reason: 'FieldValueRequired' },
  ],
  [
    'operator known',
    workload({ matchExpressions: [{ key: 'app', operator: 'Has' }] }),
    { field: 'spec.selector.matchExpressions[0].operator', reason: 'FieldValueInvalid' },
  ],
  [
    'template containers validated',
    {
      metadata: { name: 'w' },
      spec: {
        selector: { matchLabels: { app: 'a' } },
        template: template({ app: 'a' }, { containers: [{ image: 'i' }] }),
      },
    },
    { field: 'spec.template.spec.containers[0].name', reason: 'FieldValueRequired' },
  ],
  [
    'template restartPolicy Always',
    {
      metadata: { name: 'w' },
      spec: {
        selector: { matchLabels: { app: 'a' } },
        template: template({ app: 'a' }, { containers: [c()], restartPolicy: 'Never' }),
      },
    },
    { field: 'spec.template.spec.restartPolicy', reason: 'FieldValueNotSupported' },
  ],
  [
    'replicas non-negative',
    workload({ matchLabels: { app: 'a' } }, { app: 'a' }, { replicas: -1 }),
    { field: 'spec.replicas', reason: 'FieldValueInvalid' },
  ],
];

const KINDS: [string, ResourceStrategy][] = [
  ['Deployment', deploymentStrategy],
  ['ReplicaSet', replicaSetStrategy],
  ['StatefulSet', statefulSetStrategy],
  ['DaemonSet', daemonSetStrategy],
];

test('selectors are required and match the template (Deployment, ReplicaSet, StatefulSet, DaemonSet)', () => {
  for (const [kind, s] of KINDS) {
    for (const [label, obj, expect] of WORKLOAD_ROWS) {
      if (kind === 'DaemonSet' && label.startsWith('replicas')) continue;
      check(create(s, obj), expect, `${kind}: ${label}`);
    }
  }
});

const job = (spec: any) => ({ metadata: { name: 'j' }, spec });
const JOB_ROWS: [string, any, Expect?][] = [
  [
    'generated selector matches generated labels',
    job({ template: template({ app: 'a' }, { containers: [c()], restartPolicy: 'Never' }) }),
  ],
  [
    'manual selector matching',
    job({
      manualSelector: true,
      selector: { matchLabels: { app: 'a' } },
      template: template({ app: 'a' }, { containers: [c()], restartPolicy: 'OnFailure' }),
    }),
  ],
  [
    'manual selector not matching',
    job({
      manualSelector: true,
      selector: { matchLabels: { app: 'b' } },
      template: template({ app: 'a' }, { containers: [c()], restartPolicy: 'Never' }),
    }),
    MISMATCH,
  ],
  [
    'manual selector required',
    job({ manualSelector: true, template: template({ app: 'a' }, { containers: [c()], restartPolicy: 'Never' }) }),
    { field: 'spec.selector', reason: 'FieldValueRequired' },
  ],
  [
    'restartPolicy OnFailure or Never',
    job({ template: template({ app: 'a' }) }),
    {
      field: 'spec.template.spec.restartPolicy',
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "Always": supported values: "OnFailure", "Never"',
    },
  ],
];

test('Job selectors: generated, or manual and matching; restartPolicy', () => {
  for (const [label, obj, expect] of JOB_ROWS) check(create(jobStrategy, obj), expect, label);
  const j = prepared(jobStrategy, JOB_ROWS[0]![1]);
  const uid = j.metadata.uid;
  assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.platform.io/controller-uid': uid } });
  assert.equal(j.spec.template.metadata.labels['batch.platform.io/job-name'], 'j');
  assert.equal(j.spec.template.metadata.labels['controller-uid'], uid);
  assert.deepEqual(
    [j.spec.completions, j.spec.parallelism, j.spec.backoffLimit, j.spec.completionMode],
    [1, 1, 6, 'NonIndexed'],
  );
});

const cron = (schedule: any) => ({
  metadata: { name: 'cj' },
  spec: {
    schedule,
    jobTemplate: { spec: { template: template({}, { containers: [c()], restartPolicy: 'OnFailure' }) } },
  },
});
const CRON_ROWS: [string, any, Expect?][] = [
  ['five fields', cron('*/5 0-6,12 1 JAN-MAR mon-fri')],
  ['descriptor', cron('@hourly')],
  ['@every', cron('@every 1h30m')],
  ['schedule required', cron(undefined), { field: 'spec.schedule', reason: 'FieldValueRequired' }],
  [
    'wrong field count',
    cron('* * *'),
    {
      field: 'spec.schedule',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]',
    },
  ],
  [
    'minute out of range',
    cron('61 * * * *'),
    { field: 'spec.schedule', reason: 'FieldValueInvalid', message: 'end of range (61) above maximum (59): 61' },
  ],
  [
    'not a number',
    cron('x * * * *'),
    { field: 'spec.schedule', reason: 'FieldValueInvalid', message: 'failed to parse int from x' },
  ],
  [
    'day of month from 1',
    cron('0 0 0 * *'),
    { field: 'spec.schedule', reason: 'FieldValueInvalid', message: 'beginning of range (0) below minimum (1): 0' },
  ],
  [
    'unknown descriptor',
    cron('@fortnightly'),
    { field: 'spec.schedule', reason: 'FieldValueInvalid', message: 'unrecognized descriptor: @fortnightly' },
  ],
  [
    'no TZ in schedule',
    cron('TZ=UTC 0 * * * *'),
    { field: 'spec.schedule', reason: 'FieldValueInvalid', message: 'cannot use TZ or CRON_TZ in schedule' },
  ],
];

test('CronJob schedules: five cron fields or a descriptor', () => {
  for (const [label, obj, expect] of CRON_ROWS) check(create(cronJobStrategy, obj), expect, label);
});
