/**
 * Defaulting over HTTP: the defaults upstream sets on workloads, their pod templates, Pods,
 * Services and priority levels, applied on create, update, patch and apply (apply-created
 * objects included); a sole owner's omitted field goes back to its default; Protobuf bodies'
 * Go zero values count as unset.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const NS = '/namespaces/default';
const APPS = `/apis/apps/v1${NS}`;
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

const template = (app: string, image = 'nginx:1.27') => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image }] },
});
const deployment = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: template(name), ...spec },
});

const POD_SPEC_DEFAULTS = {
  restartPolicy: 'Always',
  dnsPolicy: 'ClusterFirst',
  schedulerName: 'default-scheduler',
  terminationGracePeriodSeconds: 30,
  securityContext: {},
};
const CONTAINER_DEFAULTS = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
  resources: {},
};

async function created(path: string, body: unknown): Promise<any> {
  const r = await request(s.url, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/** The spec minus its pod template, and the template's pod spec. */
const parts = (obj: any, at = (o: any) => o.spec.template) => {
  const { template: _t, ...rest } = obj.spec;
  return { spec: rest, pod: at(obj).spec };
};

test('Deployment: spec and pod template defaults on create', async () => {
  const d = await created(`${APPS}/deployments`, deployment('df-dep'));
  const { spec, pod } = parts(d);
  assert.deepEqual(spec, {
    replicas: 1,
    selector: { matchLabels: { app: 'df-dep' } },
    progressDeadlineSeconds: 600,
    revisionHistoryLimit: 10,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
  });
  assert.deepEqual(pod, {
    ...POD_SPEC_DEFAULTS,
    containers: [{ name: 'c', image: 'nginx:1.27', ...CONTAINER_DEFAULTS }],
  });
});

test('Deployment: set values are kept; Recreate gets no rollingUpdate; :latest pulls Always', async () => {
  const d = await created(
    `${APPS}/deployments`,
    deployment('df-dep-set', {
      replicas: 0,
      revisionHistoryLimit: 0,
      progressDeadlineSeconds: 30,
      strategy: { type: 'Recreate' },
      template: template('df-dep-set', 'nginx'),
    }),
  );
  assert.deepEqual(
    [d.spec.replicas, d.spec.revisionHistoryLimit, d.spec.progressDeadlineSeconds, d.spec.strategy],
    [0, 0, 30, { type: 'Recreate' }],
  );
  assert.equal(d.spec.template.spec.containers[0].imagePullPolicy, 'Always');
  const partial = await created(
    `${APPS}/deployments`,
    deployment('df-dep-ru', { strategy: { rollingUpdate: { maxSurge: 2 } } }),
  );
  assert.deepEqual(partial.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' },
  });
});

test('defaults come back on update and patch when a write drops them', async () => {
  const d = await created(`${APPS}/deployments`, deployment('df-dep-up'));
  delete d.spec.progressDeadlineSeconds;
  delete d.spec.template.spec.containers[0].terminationMessagePath;
  d.spec.template.spec.restartPolicy = '';
  const put = await request(s.url, 'PUT', `${APPS}/deployments/df-dep-up`, d);
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.spec.progressDeadlineSeconds, 600);
  assert.equal(put.json.spec.template.spec.restartPolicy, 'Always');
  assert.equal(put.json.spec.template.spec.containers[0].terminationMessagePath, '/dev/termination-log');
  assert.equal(put.json.metadata.resourceVersion, d.metadata.resourceVersion, 'nothing changed: no new revision');
  assert.equal(put.json.metadata.generation, 1, 'nor a new generation');
  const p = await request(
    s.url,
    'PATCH',
    `${APPS}/deployments/df-dep-up`,
    { spec: { revisionHistoryLimit: null, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
    MERGE,
  );
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.spec.revisionHistoryLimit, 10);
  assert.deepEqual(p.json.spec.template.spec.containers, [
    { name: 'c', image: 'nginx', ...CONTAINER_DEFAULTS, imagePullPolicy: 'Always' },
  ]);
});

test('apply: an apply-created object is defaulted; a field its sole applier drops goes back to its default', async () => {
  const first = await request(
    s.url,
    'PATCH',
    `${APPS}/deployments/df-apply?fieldManager=a`,
    deployment('df-apply', { revisionHistoryLimit: 3 }),
    APPLY,
  );
  assert.equal(first.status, 201, first.text);
  const { spec, pod } = parts(first.json);
  assert.deepEqual(
    [spec.progressDeadlineSeconds, spec.revisionHistoryLimit, spec.strategy.type, pod.dnsPolicy],
    [600, 3, 'RollingUpdate', 'ClusterFirst'],
  );
  assert.deepEqual(pod.containers[0], { name: 'c', image: 'nginx:1.27', ...CONTAINER_DEFAULTS });
  const owned = JSON.stringify(first.json.metadata.managedFields);
  assert.ok(
    !owned.includes('progressDeadlineSeconds') && !owned.includes('dnsPolicy'),
    'defaults belong to no manager',
  );
  const again = await request(
    s.url,
    'PATCH',
    `${APPS}/deployments/df-apply?fieldManager=a`,
    deployment('df-apply'),
    APPLY,
  );
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.spec.revisionHistoryLimit, 10);
});

test('apply: a port applied without protocol is the stored TCP port (key field default), again and again', async () => {
  const body = deployment('df-apply-port', {
    template: {
      metadata: { labels: { app: 'df-apply-port' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
    },
  });
  for (const status of [201, 200, 200]) {
    const r = await request(s.url, 'PATCH', `${APPS}/deployments/df-apply-port?fieldManager=a`, body, APPLY);
    assert.equal(r.status, status, r.text);
    assert.deepEqual(r.json.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
  }
});

test('StatefulSet and DaemonSet defaults', async () => {
  const sts = await created(`${APPS}/statefulsets`, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'df-sts' },
    spec: {
      serviceName: 'x',
      selector: { matchLabels: { app: 'df-sts' } },
      template: template('df-sts'),
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  });
  const { spec, pod } = parts(sts);
  assert.deepEqual([spec.replicas, spec.podManagementPolicy, spec.revisionHistoryLimit], [1, 'OrderedReady', 10]);
  assert.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  assert.deepEqual(spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
  assert.deepEqual(
    [spec.volumeClaimTemplates[0].spec.volumeMode, spec.volumeClaimTemplates[0].status],
    ['Filesystem', { phase: 'Pending' }],
  );
  assert.equal(pod.schedulerName, 'default-scheduler');
  const ds = await created(`${APPS}/daemonsets`, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'df-ds' },
    spec: { selector: { matchLabels: { app: 'df-ds' } }, template: template('df-ds') },
  });
  assert.deepEqual(ds.spec.updateStrategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
  });
  assert.equal(ds.spec.revisionHistoryLimit, 10);
  assert.deepEqual(parts(ds).pod, {
    ...POD_SPEC_DEFAULTS,
    containers: [{ name: 'c', image: 'nginx:1.27', ...CONTAINER_DEFAULTS }],
  });
});

test('Job and CronJob defaults', async () => {
  const jobTemplate = { spec: { containers: [{ name: 'c', image: 'busybox:1' }], restartPolicy: 'Never' } };
  const job = await created(`/apis/batch/v1${NS}/jobs`, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'df-job' },
    spec: { template: jobTemplate },
  });
  const { spec, pod } = parts(job);
  assert.deepEqual(
    [
      spec.completions,
      spec.parallelism,
      spec.backoffLimit,
      spec.completionMode,
      spec.suspend,
      spec.podReplacementPolicy,
    ],
    [1, 1, 6, 'NonIndexed', false, 'TerminatingOrFailed'],
  );
  assert.deepEqual(
    [pod.restartPolicy, pod.dnsPolicy, pod.containers[0].imagePullPolicy],
    ['Never', 'ClusterFirst', 'IfNotPresent'],
  );
  assert.equal(job.metadata.labels['job-name'], 'df-job', "a Job without labels takes its template's");
  const cj = await created(`/apis/batch/v1${NS}/cronjobs`, {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'df-cj' },
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: jobTemplate } } },
  });
  assert.deepEqual(
    [cj.spec.concurrencyPolicy, cj.spec.suspend, cj.spec.successfulJobsHistoryLimit, cj.spec.failedJobsHistoryLimit],
    ['Allow', false, 3, 1],
  );
  assert.deepEqual(cj.spec.jobTemplate.spec.template.spec, {
    ...POD_SPEC_DEFAULTS,
    restartPolicy: 'Never',
    containers: [{ name: 'c', image: 'busybox:1', ...CONTAINER_DEFAULTS }],
  });
});

test('Pod: probe, volume and resource defaults', async () => {
  const pod = await created(`/api/v1${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'df-pod' },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'nginx:1',
          resources: { limits: { cpu: '1' } },
          readinessProbe: { httpGet: { port: 80 } },
          env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        },
      ],
      volumes: [{ name: 'e' }, { name: 's', secret: { secretName: 'x' } }, { name: 'h', hostPath: { path: '/tmp' } }],
    },
  });
  const c = pod.spec.containers[0];
  assert.deepEqual(c.readinessProbe, {
    httpGet: { port: 80, path: '/', scheme: 'HTTP' },
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.deepEqual(c.resources, { limits: { cpu: '1' }, requests: { cpu: '1' } });
  assert.equal(c.env[0].valueFrom.fieldRef.apiVersion, 'v1');
  // the ServiceAccount admission plugin appends the token volume (test/admission/service-account.test.ts)
  assert.deepEqual(
    pod.spec.volumes.filter((v: any) => !v.name.startsWith('plat-api-access-')),
    [
      { name: 'e', emptyDir: {} },
      { name: 's', secret: { secretName: 'x', defaultMode: 420 } },
      { name: 'h', hostPath: { path: '/tmp', type: '' } },
    ],
  );
  assert.equal(pod.spec.enableServiceLinks, true);
});

test('PriorityLevelConfiguration: nominalConcurrencyShares 30 only when unspecified, an explicit 0 kept; FlowSchema precedence', async () => {
  const FC = '/apis/flowcontrol.apiserver.plat.io/v1';
  const plc = (name: string, limited: Record<string, unknown>) => ({
    apiVersion: 'flowcontrol.apiserver.plat.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: { type: 'Limited', limited },
  });
  const unset = await created(`${FC}/prioritylevelconfigurations`, plc('df-plc', { limitResponse: { type: 'Queue' } }));
  assert.deepEqual(unset.spec.limited, {
    nominalConcurrencyShares: 30,
    lendablePercent: 0,
    limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
  });
  const zero = await created(
    `${FC}/prioritylevelconfigurations`,
    plc('df-plc-0', { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } }),
  );
  assert.equal(zero.spec.limited.nominalConcurrencyShares, 0);
  const p = await request(
    s.url,
    'PATCH',
    `${FC}/prioritylevelconfigurations/df-plc-0`,
    { spec: { limited: { nominalConcurrencyShares: null } } },
    MERGE,
  );
  assert.equal(p.json.spec.limited.nominalConcurrencyShares, 30, p.text);
  const fs = await created(`${FC}/flowschemas`, {
    apiVersion: 'flowcontrol.apiserver.plat.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'df-fs' },
    spec: { priorityLevelConfiguration: { name: 'df-plc' } },
  });
  assert.equal(fs.spec.matchingPrecedence, 1000);
});

test('Protobuf bodies: Go zero values ("" and 0 in non-pointer fields) are defaulted like absent ones', async () => {
  const codec = new ProtobufCodec();
  const post = async (path: string, obj: unknown) => {
    const res = await fetch(s.url + path, {
      method: 'POST',
      headers: { 'content-type': PROTOBUF_MEDIA_TYPE },
      body: codec.encodeObject(obj) as BodyInit,
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    return JSON.parse(text);
  };
  const zeroPod = {
    restartPolicy: '',
    dnsPolicy: '',
    schedulerName: '',
    containers: [
      {
        name: 'c',
        image: 'nginx',
        imagePullPolicy: '',
        terminationMessagePath: '',
        terminationMessagePolicy: '',
        ports: [{ containerPort: 80, protocol: '' }],
      },
    ],
  };
  const d = await post(`${APPS}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'df-pb' },
    spec: {
      strategy: { type: '' },
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: zeroPod },
    },
  });
  assert.deepEqual(d.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
  });
  assert.deepEqual(
    [d.spec.template.spec.restartPolicy, d.spec.template.spec.dnsPolicy, d.spec.template.spec.schedulerName],
    ['Always', 'ClusterFirst', 'default-scheduler'],
  );
  const c = d.spec.template.spec.containers[0];
  assert.deepEqual(
    [c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy, c.ports[0].protocol],
    ['Always', '/dev/termination-log', 'File', 'TCP'],
  );
  const svc = await post(`/api/v1${NS}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'df-pb-svc' },
    spec: { type: '', sessionAffinity: '', clusterIP: '', ports: [{ port: 80, targetPort: 0, protocol: '' }] },
  });
  assert.deepEqual(
    [svc.spec.type, svc.spec.sessionAffinity, svc.spec.ports[0].protocol, svc.spec.ports[0].targetPort],
    ['ClusterIP', 'None', 'TCP', 80],
  );
  assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
});
