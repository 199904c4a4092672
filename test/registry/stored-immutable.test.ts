/**
 * The cached (stored) object is never written into by a write that starts from it. A patch
 * works on the stored object itself (src/registry/patch.ts patchBase: no copy below metadata),
 * so any step after it that wrote into a node it did not make (quantities, the kinds'
 * prepareForUpdate defaulters, validation, managed fields, the commit) would silently change the
 * cached object, which no longer matches its stored JSON. Here every object the type caches
 * hand out is deep-frozen (a write into it throws: modules are strict), and every built-in kind
 * with a strategy goes through apply, a no-op apply, merge, strategic and JSON patches, an
 * update and a status patch in an in-process shard; each must succeed, and each cached object
 * must still equal its JSON.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CachedEntry } from '../../src/storage/cacher/cached-entry.js';
import type { Op, Result, TypeRef } from '../../src/actors/protocol.js';
import { openShard, type LocalShard } from '../helpers/shard.js';
import { deepFreeze } from '../../src/api/deep-freeze.js';

const seen = new Set<CachedEntry>();
const getter = Object.getOwnPropertyDescriptor(CachedEntry.prototype, 'obj')!.get!;
let local: LocalShard;

before(async () => {
  Object.defineProperty(CachedEntry.prototype, 'obj', {
    configurable: true,
    get(this: CachedEntry) {
      const obj: unknown = getter.call(this);
      deepFreeze(obj);
      seen.add(this);
      return obj;
    },
  });
  local = await openShard('stored-immutable');
});
after(() => {
  Object.defineProperty(CachedEntry.prototype, 'obj', { configurable: true, get: getter });
  local.close();
});

interface Kind {
  type: TypeRef;
  kind: string;
  namespaced: boolean;
  /** the body beyond apiVersion, kind and metadata */
  body: Record<string, unknown>;
  status?: Record<string, unknown>;
  /** patches whose defaulting writes beside what they change (node ports, requests, host ports): type, text, codes */
  extra?: [string, string, number[]][];
}

const containers = [
  {
    name: 'c',
    image: 'busybox:1.36',
    command: ['sleep', '3600'],
    ports: [{ containerPort: 8080 }],
    resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
  },
  { name: 'd', image: 'busybox:1.36', env: [{ name: 'A', value: '1' }] },
];
const template = { metadata: { labels: { app: 'im' } }, spec: { containers } };
const selector = { matchLabels: { app: 'im' } };
const core = (resource: string): TypeRef => ({ group: '', version: 'v1', resource });
const t = (group: string, version: string, resource: string): TypeRef => ({ group, version, resource });
const webhook = {
  name: 'w.example.com',
  clientConfig: { url: 'https://example.com/hook' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
};

const KINDS: Kind[] = [
  { type: core('configmaps'), kind: 'ConfigMap', namespaced: true, body: { data: { k: 'v' } } },
  { type: core('secrets'), kind: 'Secret', namespaced: true, body: { type: 'Opaque', data: { k: 'dmFsdWU=' } } },
  { type: core('namespaces'), kind: 'Namespace', namespaced: false, body: { spec: { finalizers: ['kubernetes'] } } },
  {
    type: core('pods'),
    kind: 'Pod',
    namespaced: true,
    body: { spec: { containers, restartPolicy: 'Always', overhead: { cpu: '10m' } } },
    status: { phase: 'Pending' },
    // refused by pod update validation, after the defaults ran
    extra: [
      ['strategic', '{"spec":{"containers":[{"name":"c","resources":{"limits":{"ephemeral-storage":"1Gi"}}}]}}', [422]],
      ['merge', '{"spec":{"hostNetwork":true}}', [422]],
    ],
  },
  { type: core('nodes'), kind: 'Node', namespaced: false, body: { spec: { podCIDR: '10.0.0.0/24' } } },
  {
    type: core('services'),
    kind: 'Service',
    namespaced: true,
    body: { spec: { selector: { app: 'im' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } },
    extra: [
      ['merge', '{"spec":{"type":"NodePort"}}', [200]],
      ['merge', '{"spec":{"type":"ClusterIP"}}', [200]],
    ],
  },
  {
    type: core('persistentvolumeclaims'),
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    body: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  },
  {
    type: core('replicationcontrollers'),
    kind: 'ReplicationController',
    namespaced: true,
    body: { spec: { replicas: 1, selector: { app: 'im' }, template } },
    status: { replicas: 1 },
  },
  {
    type: core('endpoints'),
    kind: 'Endpoints',
    namespaced: true,
    body: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
  },
  {
    type: core('events'),
    kind: 'Event',
    namespaced: true,
    body: {
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
    },
  },
  {
    type: core('limitranges'),
    kind: 'LimitRange',
    namespaced: true,
    body: { spec: { limits: [{ type: 'Container', max: { cpu: '1' }, default: { memory: '1Gi' } }] } },
  },
  {
    type: core('resourcequotas'),
    kind: 'ResourceQuota',
    namespaced: true,
    body: { spec: { hard: { pods: '10', 'requests.cpu': '2' } } },
  },
  {
    type: t('apps', 'v1', 'deployments'),
    kind: 'Deployment',
    namespaced: true,
    body: { spec: { replicas: 2, selector, template } },
    status: { replicas: 2 },
  },
  {
    type: t('apps', 'v1', 'replicasets'),
    kind: 'ReplicaSet',
    namespaced: true,
    body: { spec: { replicas: 1, selector, template } },
  },
  {
    type: t('apps', 'v1', 'statefulsets'),
    kind: 'StatefulSet',
    namespaced: true,
    body: {
      spec: {
        replicas: 1,
        serviceName: 'im',
        selector,
        template,
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    },
  },
  { type: t('apps', 'v1', 'daemonsets'), kind: 'DaemonSet', namespaced: true, body: { spec: { selector, template } } },
  {
    type: t('batch', 'v1', 'jobs'),
    kind: 'Job',
    namespaced: true,
    body: { spec: { template: { spec: { containers, restartPolicy: 'Never' } } } },
  },
  {
    type: t('batch', 'v1', 'cronjobs'),
    kind: 'CronJob',
    namespaced: true,
    body: {
      spec: {
        schedule: '*/5 * * * *',
        jobTemplate: { spec: { template: { spec: { containers, restartPolicy: 'Never' } } } },
      },
    },
  },
  {
    type: t('autoscaling', 'v2', 'horizontalpodautoscalers'),
    kind: 'HorizontalPodAutoscaler',
    namespaced: true,
    body: {
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
        minReplicas: 1,
        maxReplicas: 3,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    },
  },
  {
    type: t('policy', 'v1', 'poddisruptionbudgets'),
    kind: 'PodDisruptionBudget',
    namespaced: true,
    body: { spec: { minAvailable: 1, selector } },
  },
  {
    type: t('networking.plat.io', 'v1', 'ingresses'),
    kind: 'Ingress',
    namespaced: true,
    body: {
      spec: {
        rules: [
          {
            host: 'a.example.com',
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }],
            },
          },
        ],
      },
    },
  },
  {
    type: t('admissionregistration.plat.io', 'v1', 'validatingwebhookconfigurations'),
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
    body: { webhooks: [webhook] },
  },
  {
    type: t('admissionregistration.plat.io', 'v1', 'mutatingwebhookconfigurations'),
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
    body: { webhooks: [webhook] },
  },
  {
    type: t('coordination.plat.io', 'v1', 'leases'),
    kind: 'Lease',
    namespaced: true,
    body: { spec: { holderIdentity: 'im', leaseDurationSeconds: 15, renewTime: '2024-05-06T07:08:09.123456Z' } },
  },
  {
    type: t('rbac.authorization.plat.io', 'v1', 'roles'),
    kind: 'Role',
    namespaced: true,
    body: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
  },
  {
    type: t('rbac.authorization.plat.io', 'v1', 'rolebindings'),
    kind: 'RoleBinding',
    namespaced: true,
    body: {
      roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.plat.io' }],
    },
  },
  {
    type: t('rbac.authorization.plat.io', 'v1', 'clusterroles'),
    kind: 'ClusterRole',
    namespaced: false,
    body: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
  },
  {
    type: t('rbac.authorization.plat.io', 'v1', 'clusterrolebindings'),
    kind: 'ClusterRoleBinding',
    namespaced: false,
    body: {
      roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'ClusterRole', name: 'r' },
      subjects: [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.plat.io' }],
    },
  },
  {
    type: t('flowcontrol.apiserver.plat.io', 'v1', 'prioritylevelconfigurations'),
    kind: 'PriorityLevelConfiguration',
    namespaced: false,
    body: { spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } },
  },
  {
    type: t('flowcontrol.apiserver.plat.io', 'v1', 'flowschemas'),
    kind: 'FlowSchema',
    namespaced: false,
    body: {
      spec: {
        priorityLevelConfiguration: { name: 'global-default' },
        matchingPrecedence: 500,
        rules: [
          {
            subjects: [{ kind: 'Group', group: { name: 'g' } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
          },
        ],
      },
    },
  },
];

const enc = { format: 'json', pretty: false } as const;
const user = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
let nextId = 1;

function apiVersion(k: Kind): string {
  return k.type.group ? `${k.type.group}/${k.type.version}` : k.type.version;
}

function objectOf(k: Kind, name: string, labels: Record<string, string>): Record<string, unknown> {
  const metadata = { name, labels: { app: 'im', ...labels }, ...(k.namespaced ? { namespace: 'default' } : {}) };
  return { apiVersion: apiVersion(k), kind: k.kind, metadata, ...k.body };
}

function answer(r: Result): { code: number; json: any } {
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

async function run(op: Op, label: string, codes = [200]): Promise<any> {
  const a = answer(await local.one(op));
  assert.ok(codes.includes(a.code), `${label}: ${a.code} ${JSON.stringify(a.json)}`);
  return a.json;
}

function write(k: Kind, name: string, fields: Record<string, unknown>): Op {
  const base = { id: nextId++, type: k.type, enc, dryRun: false, namespace: k.namespaced ? 'default' : '', user };
  return { ...base, name, ...fields } as Op;
}

function patchOp(k: Kind, name: string, patchType: string, text: string, manager: string, sub?: string): Op {
  const type = sub ? { ...k.type, subresource: sub } : k.type;
  return {
    ...write(k, name, { op: 'patch', patchType, text, force: patchType === 'apply', fieldManager: manager }),
    type,
  } as Op;
}

/** Every kind's object through each write that starts from the stored object. */
async function writeEach(k: Kind): Promise<void> {
  const name = `im-${k.kind.toLowerCase()}`;
  const created = { ...write(k, name, {}), op: 'create', fieldManager: 'creator' } as Op & { name?: string };
  delete created.name;
  const body = JSON.stringify(objectOf(k, name, { created: 'yes' }));
  await run({ ...created, body: { text: body, contentType: 'json' } } as Op, `${k.kind} create`, [201]);
  const applied = JSON.stringify(objectOf(k, name, { applied: 'yes' }));
  await run(patchOp(k, name, 'apply', applied, 'applier'), `${k.kind} apply`);
  await run(patchOp(k, name, 'apply', applied, 'applier'), `${k.kind} no-op apply`);
  await run(patchOp(k, name, 'merge', '{"metadata":{"labels":{"merged":"yes"}}}', 'merger'), `${k.kind} merge`);
  const strategic = '{"metadata":{"labels":{"strategic":"yes"},"annotations":{"a":"b"}}}';
  await run(patchOp(k, name, 'strategic', strategic, 'strategist'), `${k.kind} strategic`);
  const json = '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]';
  const current = await run(patchOp(k, name, 'json', json, 'jsoner'), `${k.kind} json patch`);
  current.metadata.labels.updated = 'yes';
  const update = write(k, name, {
    op: 'update',
    fieldManager: 'updater',
    body: { text: JSON.stringify(current), contentType: 'json' },
  });
  await run(update, `${k.kind} update`);
  if (k.status) {
    const status = JSON.stringify({ apiVersion: apiVersion(k), kind: k.kind, metadata: { name }, status: k.status });
    await run(patchOp(k, name, 'apply', status, 'status-applier', 'status'), `${k.kind} status apply`);
    await run(
      patchOp(k, name, 'merge', '{"metadata":{"labels":{"s":"1"}}}', 'status-merger', 'status'),
      `${k.kind} status merge`,
    );
  }
  for (const [type, text, codes] of k.extra ?? [])
    await run(patchOp(k, name, type, text, 'extra'), `${k.kind} ${type} ${text}`, codes);
  // the applier gives up its label: the field leaves the object (prune), the rest is kept
  const less = JSON.stringify(objectOf(k, name, {}));
  await run(patchOp(k, name, 'apply', less, 'applier'), `${k.kind} apply giving up a field`);
}

test('no write into the stored object: apply, patches, update and status writes of every built-in kind with a strategy', {
  timeout: 30_000,
}, async () => {
  for (const k of KINDS) await writeEach(k);
  // each kind's object was read from its cache (and so frozen) before the writes that followed
  assert.ok(seen.size >= KINDS.length * 6, `${seen.size} cached objects read`);
  for (const e of seen) assert.deepEqual(e.obj, JSON.parse(e.json), `${e.namespace}/${e.name}@${e.rv}`);
});

test('control: the frozen cached object refuses a write, so a step writing into it fails the test above', async () => {
  const k = KINDS[0]!;
  await run(
    {
      ...write(k, 'im-control', {}),
      op: 'create',
      body: { text: JSON.stringify(objectOf(k, 'im-control', {})), contentType: 'json' },
    } as Op,
    'control create',
    [201],
  );
  await run(patchOp(k, 'im-control', 'merge', '{"data":{"k":"w"}}', 'm'), 'control merge');
  const entry = [...seen].find((e) => e.name === 'im-control');
  assert.ok(entry, 'the control object was read from the cache');
  const obj = entry.obj as unknown as { data: Record<string, string> };
  assert.throws(() => {
    obj.data.k = 'changed';
  }, TypeError);
});
