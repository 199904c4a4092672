/**
 * What the fuzzer aims at: every resource type the server's discovery documents list (core and
 * named groups, namespaced and cluster-scoped, with their subresources and verbs), the
 * non-resource endpoints, the namespaces and name pools, and one seed body per kind.
 */
import { allKinds, fullSample, minimalSample } from '../fixtures/protobuf/samples.js';

export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: Set<string>;
  /** subresource name -> verbs */
  subresources: Map<string, Set<string>>;
}

/** Namespaces whose objects get the half-write check; never deleted by the fuzzer. */
export const STABLE_NAMESPACES = ['default', 'fuzz-a', 'fuzz-b'] as const;
/** Namespaces the fuzzer may create, delete and write into without checks. */
export const SCRATCH_NAMESPACES = ['fz-ns-0', 'fz-ns-1', 'fz-ns-2', 'fz-ns-gone'] as const;
/** Object names whose writes are checked (one request at a time per object). */
export const CHECKED_NAMES = ['fz-0', 'fz-1', 'fz-2'] as const;
/** Object names for unchecked traffic (mutated paths, scratch namespaces). */
export const LOOSE_NAMES = ['fz-u-0', 'fz-u-1', 'fz-u-2'] as const;

export const NON_RESOURCE_PATHS = [
  '/',
  '/api',
  '/apis',
  '/version',
  '/version/',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/',
  '/openapi/v3/api/v1',
  '/openapi/v3/apis/apps/v1',
  '/openapi/v3/apis/nope/v9',
  '/healthz',
  '/livez',
  '/readyz',
  '/readyz/ping',
  '/livez/log',
  '/healthz/backing-store',
  '/readyz/shutdown',
  '/readyz/nope',
  '/readyz?verbose',
  '/livez?exclude=ping&verbose=1',
  '/metrics',
  '/logs',
  '/debug/pprof',
  '/.well-known/openid-configuration',
  '/openid/v1/jwks',
  '/favicon.ico',
] as const;

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

export function collectionPath(t: ResourceType, ns?: string): string {
  const prefix = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  return t.namespaced && ns !== undefined ? `${prefix}/namespaces/${ns}/${t.resource}` : `${prefix}/${t.resource}`;
}

export function objectPath(t: ResourceType, ns: string | undefined, name: string, sub?: string): string {
  return `${collectionPath(t, ns)}/${name}${sub ? '/' + sub : ''}`;
}

/** Reads every APIResourceList the server serves and builds the type table. */
export async function discover(base: string): Promise<ResourceType[]> {
  const get = async (p: string) => {
    const r = await fetch(base + p);
    if (r.status !== 200) throw new Error(`discovery ${p}: ${r.status}`);
    return r.json() as Promise<any>;
  };
  const groupVersions: { group: string; version: string; path: string }[] = [];
  for (const v of (await get('/api')).versions as string[])
    groupVersions.push({ group: '', version: v, path: `/api/${v}` });
  for (const g of (await get('/apis')).groups as any[]) {
    for (const v of g.versions)
      groupVersions.push({ group: g.name, version: v.version, path: `/apis/${v.groupVersion}` });
  }
  const types: ResourceType[] = [];
  for (const gv of groupVersions) {
    const list = await get(gv.path);
    const byName = new Map<string, ResourceType>();
    for (const r of list.resources as any[]) {
      const [resource, sub] = String(r.name).split('/') as [string, string | undefined];
      if (sub === undefined) {
        const t: ResourceType = {
          group: gv.group,
          version: gv.version,
          resource,
          kind: r.kind,
          namespaced: r.namespaced,
          verbs: new Set(r.verbs),
          subresources: new Map(),
        };
        byName.set(resource, t);
        types.push(t);
      }
    }
    for (const r of list.resources as any[]) {
      const [resource, sub] = String(r.name).split('/') as [string, string | undefined];
      if (sub !== undefined) byName.get(resource)?.subresources.set(sub, new Set(r.verbs));
    }
  }
  return types.sort((a, b) =>
    `${a.group}/${a.version}/${a.resource}`.localeCompare(`${b.group}/${b.version}/${b.resource}`),
  );
}

const containers = [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'], ports: [{ containerPort: 8080 }] }];
const template = { metadata: { labels: { app: 'fz' } }, spec: { containers } };

/** Hand-written valid bodies (beyond metadata) for the kinds the server validates or users write most. */
const HAND: Record<string, Record<string, unknown>> = {
  ConfigMap: { data: { k: 'v', 'a.b': 'line1\nline2' }, binaryData: { bin: 'AAEC' } },
  Secret: { type: 'Opaque', data: { k: 'dmFsdWU=' }, stringData: { s: 'plain' } },
  Namespace: { spec: { finalizers: ['kubernetes'] } },
  Pod: { spec: { containers, restartPolicy: 'Always' } },
  Service: {
    spec: { selector: { app: 'fz' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  },
  Deployment: { spec: { replicas: 2, selector: { matchLabels: { app: 'fz' } }, template } },
  ReplicaSet: { spec: { replicas: 1, selector: { matchLabels: { app: 'fz' } }, template } },
  StatefulSet: { spec: { replicas: 1, serviceName: 'fz', selector: { matchLabels: { app: 'fz' } }, template } },
  DaemonSet: { spec: { selector: { matchLabels: { app: 'fz' } }, template } },
  ReplicationController: { spec: { replicas: 1, selector: { app: 'fz' }, template } },
  Job: { spec: { template: { spec: { containers, restartPolicy: 'Never' } } } },
  CronJob: {
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: { spec: { containers, restartPolicy: 'Never' } } } },
    },
  },
  Lease: { spec: { holderIdentity: 'fz', leaseDurationSeconds: 15, renewTime: '2024-05-06T07:08:09.123456Z' } },
  Event: {
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'Fuzz',
    message: 'm',
    type: 'Normal',
  },
  Role: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
  ClusterRole: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
  RoleBinding: {
    roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'User', name: 'u' }],
  },
  ClusterRoleBinding: {
    roleRef: { apiGroup: 'rbac.authorization.plat.io', kind: 'ClusterRole', name: 'r' },
    subjects: [{ kind: 'User', name: 'u' }],
  },
  Node: { spec: { podCIDR: '10.0.0.0/24', unschedulable: false } },
  PersistentVolume: {
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
  },
  PersistentVolumeClaim: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  ServiceAccount: { automountServiceAccountToken: false },
  PriorityClass: { value: 1000, globalDefault: false },
  ResourceQuota: { spec: { hard: { pods: '10', 'requests.cpu': '2' } } },
  LimitRange: { spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } },
  Endpoints: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
  PodTemplate: { template },
  Binding: { target: { kind: 'Node', name: 'node-1' } },
  Eviction: { deleteOptions: { gracePeriodSeconds: 0 } },
  Scale: { spec: { replicas: 3 } },
};

const kindDefs = new Map<string, string>();
for (const { def, gvk } of allKinds()) kindDefs.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, def);

/** A fresh valid-looking body of the type (kind, apiVersion, metadata.name[/namespace]). */
export function seedBody(t: ResourceType, name: string, ns: string | undefined, full = false): Record<string, any> {
  const def = kindDefs.get(`${t.group}/${t.version}/${t.kind}`);
  let body: Record<string, any>;
  if (HAND[t.kind]) body = structuredClone(HAND[t.kind]!);
  else if (def) {
    body = (full ? fullSample : minimalSample)(def, { group: t.group, version: t.version, kind: t.kind });
    delete body.status;
  } else body = {};
  const labels = { app: 'fz', 'fuzz.plat.io/seed': 'yes' };
  return {
    ...body,
    apiVersion: apiVersionOf(t),
    kind: t.kind,
    metadata: { name, ...(t.namespaced && ns ? { namespace: ns } : {}), labels },
  };
}

/** A body of the kind a subresource write expects (Scale, Binding, Eviction, the object itself). */
export function subresourceBody(
  t: ResourceType,
  sub: string,
  name: string,
  ns: string | undefined,
  current: any,
): Record<string, any> {
  const meta = { name, ...(ns ? { namespace: ns } : {}) };
  switch (sub) {
    case 'scale':
      return {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { ...meta, resourceVersion: current?.metadata?.resourceVersion },
        spec: { replicas: 3 },
      };
    case 'binding':
      return {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: meta,
        target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
      };
    case 'eviction':
      return { apiVersion: 'policy/v1', kind: 'Eviction', metadata: meta, deleteOptions: { gracePeriodSeconds: 0 } };
    case 'token':
      return {
        apiVersion: 'authentication.plat.io/v1',
        kind: 'TokenRequest',
        spec: { audiences: ['fz'], expirationSeconds: 600 },
      };
    default: {
      const body = current ? structuredClone(current) : seedBody(t, name, ns);
      if (sub === 'status')
        body.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], replicas: 2 };
      return body;
    }
  }
}
