/**
 * The mandatory and suggested FlowSchemas and PriorityLevelConfigurations of API Priority and
 * Fairness (upstream's v1.32 bootstrap configuration, in this server's naming), created at
 * start and kept current while annotated `apf.<domain>/autoupdate-spec: "true"`.
 */
import { groupFor, type Identity } from '../api/identity.js';
import type { FlowSchema, PriorityLevelConfiguration } from '../api/kinds.js';
import type { Stored } from '../api/object.js';

export interface ApfDefaults {
  apiVersion: string;
  autoupdate: string;
  mandatory: { flowSchemas: Stored<FlowSchema>[]; priorityLevels: Stored<PriorityLevelConfiguration>[] };
  suggested: { flowSchemas: Stored<FlowSchema>[]; priorityLevels: Stored<PriorityLevelConfiguration>[] };
}

const ALL_RESOURCES = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const ALL_NON_RESOURCES = { verbs: ['*'], nonResourceURLs: ['*'] };
const group = (name: string) => ({ kind: 'Group', group: { name } });
const user = (name: string) => ({ kind: 'User', user: { name } });
const serviceAccount = (namespace: string, name: string) => ({
  kind: 'ServiceAccount',
  serviceAccount: { namespace, name },
});
const queued = (shares: number, lendablePercent: number, queues: number, handSize: number) => ({
  type: 'Limited',
  limited: {
    nominalConcurrencyShares: shares,
    lendablePercent,
    limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } },
  },
});

/** The builders the tables below share: object shapes in this server's naming. */
function builders(identity: Identity) {
  const apiVersion = `${groupFor(identity, 'flowcontrol.apiserver.plat.io')}/v1`;
  const autoupdate = `apf.${identity.domain}/autoupdate-spec`;
  const short = identity.systemNamespace.replace(/-system$/, '');
  const system = identity.systemNamespace;
  const coordination = groupFor(identity, 'coordination.plat.io');
  const meta = (name: string) => ({ name, annotations: { [autoupdate]: 'true' } });
  const pl = (name: string, spec: object) => ({
    apiVersion,
    kind: 'PriorityLevelConfiguration',
    metadata: meta(name),
    spec,
  });
  const fs = (
    name: string,
    level: string,
    precedence: number,
    distinguisher: 'ByUser' | 'ByNamespace' | undefined,
    rules: object[],
  ) => ({
    apiVersion,
    kind: 'FlowSchema',
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence: precedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  });
  const everything = (subjects: object[]) => [
    { subjects, resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] },
  ];
  const everyone = [group('system:unauthenticated'), group('system:authenticated')];
  const controllerManager = `system:${short}-controller-manager`;
  const scheduler = `system:${short}-scheduler`;
  const leases = {
    verbs: ['get', 'create', 'update'],
    apiGroups: [coordination],
    resources: ['leases'],
    namespaces: ['*'],
  };
  return {
    apiVersion,
    autoupdate,
    system,
    pl,
    fs,
    everything,
    everyone,
    controllerManager,
    scheduler,
    leases,
    coordination,
  };
}

type Builders = ReturnType<typeof builders>;

/** The suggested FlowSchemas, in upstream's order of precedence. */
function suggestedFlowSchemas(b: Builders) {
  const { fs, everything, everyone, controllerManager, scheduler, leases, system, coordination } = b;
  return [
    fs('probes', 'exempt', 2, undefined, [
      {
        subjects: everyone,
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
      },
    ]),
    fs('system-leader-election', 'leader-election', 100, 'ByUser', [
      {
        subjects: [
          user(controllerManager),
          user(scheduler),
          serviceAccount(system, 'kube-controller-manager'),
          serviceAccount(system, 'kube-scheduler'),
        ],
        resourceRules: [leases],
      },
    ]),
    fs('endpoint-controller', 'workload-high', 150, 'ByUser', [
      {
        subjects: [
          user(controllerManager),
          serviceAccount(system, 'endpoint-controller'),
          serviceAccount(system, 'endpointslicemirroring-controller'),
        ],
        resourceRules: [
          { verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] },
        ],
      },
    ]),
    fs('workload-leader-election', 'leader-election', 200, 'ByUser', [
      { subjects: [serviceAccount(system, '*')], resourceRules: [leases] },
    ]),
    fs('system-node-high', 'node-high', 400, 'ByUser', [
      {
        subjects: [group('system:nodes')],
        resourceRules: [
          { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true },
          { verbs: ['*'], apiGroups: [coordination], resources: ['leases'], namespaces: ['*'] },
        ],
      },
    ]),
    fs('system-nodes', 'system', 500, 'ByUser', everything([group('system:nodes')])),
    fs('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything([user(controllerManager)])),
    fs('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything([user(scheduler)])),
    fs('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything([serviceAccount(system, '*')])),
    fs('service-accounts', 'workload-low', 9000, 'ByUser', everything([group('system:serviceaccounts')])),
    fs('global-default', 'global-default', 9900, 'ByUser', everything(everyone)),
  ];
}

export function apfDefaults(identity: Identity): ApfDefaults {
  const b = builders(identity);
  const { apiVersion, autoupdate, pl, fs, everything, everyone } = b;
  return {
    apiVersion,
    autoupdate,
    mandatory: {
      priorityLevels: [
        pl('exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
        pl('catch-all', {
          type: 'Limited',
          limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
        }),
      ],
      flowSchemas: [
        fs('exempt', 'exempt', 1, undefined, everything([group('system:masters')])),
        fs('catch-all', 'catch-all', 10000, 'ByUser', everything(everyone)),
      ],
    },
    suggested: {
      priorityLevels: [
        pl('system', queued(30, 33, 64, 6)),
        pl('node-high', queued(40, 25, 64, 6)),
        pl('leader-election', queued(10, 0, 16, 4)),
        pl('workload-high', queued(40, 50, 128, 6)),
        pl('workload-low', queued(100, 90, 128, 6)),
        pl('global-default', queued(20, 50, 128, 6)),
      ],
      flowSchemas: suggestedFlowSchemas(b),
    },
  };
}
