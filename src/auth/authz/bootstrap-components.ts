/**
 * The default roles of the core components and built-in controllers (upstream bootstrappolicy
 * ClusterRoles() beyond the user-facing ones, and controller_policy.go), in the served domain:
 * `system:<short>-scheduler`, `system:<short>-controller-manager`, `system:node`,
 * `system:node-proxier`, `system:node-bootstrapper`, `system:auth-delegator`, ... and one
 * `system:controller:<name>` ClusterRole per controller, bound to the controller's service
 * account in the system namespace.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import type { PolicyRule } from './rbac-rules.js';

const READ = ['get', 'list', 'watch'];
const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});

export interface ComponentRole {
  name: string;
  rules: PolicyRule[];
}
export type ComponentSubject =
  | { kind: 'User' | 'Group'; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace: string };
export interface ComponentBinding {
  name: string;
  role: string;
  subjects: ComponentSubject[];
}

/** The identity's short word (`plat`, `kube`), as in its namespaces. */
export const shortOf = (identity: Identity): string => identity.systemNamespace.replace(/-system$/, '');

export function componentPolicy(
  identity: Identity,
  nodeRules: PolicyRule[],
): { roles: ComponentRole[]; bindings: ComponentBinding[] } {
  const g = (ref: string) => groupFor(identity, ref);
  const short = shortOf(identity),
    product = identity.product;
  const authn = g('authentication.plat.io'),
    authz = g('authorization.plat.io'),
    certs = g('certificates.plat.io');
  const storage = g('storage.plat.io'),
    coordination = g('coordination.plat.io'),
    events = g('events.plat.io'),
    discovery = g('discovery.plat.io');
  const event = r(['create', 'patch', 'update'], ['', events], ['events']);
  const scheduler = `system:${short}-scheduler`,
    controllerManager = `system:${short}-controller-manager`;
  const signer = (name: string) => `${product}.io/${name}`;
  const roles: ComponentRole[] = [
    {
      name: 'system:auth-delegator',
      rules: [r(['create'], [authn], ['tokenreviews']), r(['create'], [authz], ['subjectaccessreviews'])],
    },
    {
      name: 'system:node-bootstrapper',
      rules: [r(['create', 'get', 'list', 'watch'], [certs], ['certificatesigningrequests'])],
    },
    { name: 'system:node', rules: nodeRules },
    {
      name: 'system:node-proxier',
      rules: [
        r(['list', 'watch'], [''], ['services', 'endpoints']),
        r(READ, [''], ['nodes']),
        event,
        r(['list', 'watch'], [discovery], ['endpointslices']),
      ],
    },
    {
      name: 'system:node-problem-detector',
      rules: [r(['get'], [''], ['nodes']), r(['patch'], [''], ['nodes/status']), event],
    },
    {
      name: 'system:kubelet-api-admin',
      rules: [
        r(['get', 'list', 'watch', 'proxy'], [''], ['nodes']),
        r(['*'], [''], ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats']),
      ],
    },
    {
      name: `system:${short}-dns`,
      rules: [
        r(['list', 'watch'], [''], ['endpoints', 'services']),
        r(['list', 'watch'], [discovery], ['endpointslices']),
      ],
    },
    {
      name: 'system:heapster',
      rules: [
        r(READ, [''], ['events', 'namespaces', 'nodes', 'pods']),
        r(READ, ['extensions', 'apps'], ['deployments']),
      ],
    },
    {
      name: 'system:persistent-volume-provisioner',
      rules: [
        r(['create', 'delete', 'get', 'list', 'watch'], [''], ['persistentvolumes']),
        r(['get', 'list', 'update', 'watch'], [''], ['persistentvolumeclaims']),
        r(READ, [storage], ['storageclasses']),
        r(['watch', 'create', 'patch', 'update'], [''], ['events']),
      ],
    },
    {
      name: 'system:volume-scheduler',
      rules: [
        r(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumes']),
        r(READ, [storage], ['storageclasses']),
        r(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumeclaims']),
      ],
    },
    {
      name: scheduler,
      rules: [
        event,
        r(['create'], [coordination], ['leases']),
        r(['get', 'update'], [coordination], ['leases'], [`${short}-scheduler`]),
        r(['create'], [''], ['endpoints']),
        r(['get', 'update'], [''], ['endpoints'], [`${short}-scheduler`]),
        r(READ, [''], ['nodes']),
        r(['delete', 'get', 'list', 'watch'], [''], ['pods']),
        r(['create'], [''], ['bindings', 'pods/binding']),
        r(['patch', 'update'], [''], ['pods/status']),
        r(['list', 'watch'], [''], ['replicationcontrollers', 'services']),
        r(['list', 'watch'], ['apps', 'extensions'], ['replicasets']),
        r(['list', 'watch'], ['apps'], ['statefulsets']),
        r(['list', 'watch'], ['policy'], ['poddisruptionbudgets']),
        r(['list', 'watch'], [''], ['persistentvolumeclaims', 'persistentvolumes', 'namespaces']),
        r(['create'], [authn], ['tokenreviews']),
        r(['create'], [authz], ['subjectaccessreviews']),
        r(READ, [storage], ['csinodes', 'csidrivers', 'csistoragecapacities']),
      ],
    },
    {
      name: controllerManager,
      rules: [
        event,
        r(['create'], [coordination], ['leases']),
        r(['get', 'update'], [coordination], ['leases'], [`${short}-controller-manager`]),
        r(['create'], [''], ['endpoints']),
        r(['get', 'update'], [''], ['endpoints'], [`${short}-controller-manager`]),
        r(['create', 'delete'], [''], ['secrets']),
        r(['create'], [''], ['serviceaccounts']),
        r(['create'], [''], ['serviceaccounts/token']),
        r(['get'], [''], ['secrets', 'serviceaccounts']),
        r(['list', 'watch'], ['*'], ['*']),
        r(['create'], [authn], ['tokenreviews']),
        r(['create'], [authz], ['subjectaccessreviews']),
        r(['get'], [''], ['configmaps'], ['extension-apiserver-authentication']),
      ],
    },
    {
      name: `system:certificates.${identity.domain}:certificatesigningrequests:nodeclient`,
      rules: [r(['create'], [certs], ['certificatesigningrequests/nodeclient'])],
    },
    {
      name: `system:certificates.${identity.domain}:certificatesigningrequests:selfnodeclient`,
      rules: [r(['create'], [certs], ['certificatesigningrequests/selfnodeclient'])],
    },
    ...['kube-apiserver-client', 'kube-apiserver-client-kubelet', 'kubelet-serving', 'legacy-unknown'].map((s) => ({
      name: `system:certificates.${identity.domain}:${s.replace(/^kube-/, `${short}-`)}-approver`,
      rules: [r(['approve'], [certs], ['signers'], [signer(s.replace(/^kube-/, `${short}-`))])],
    })),
  ];
  const controllers = controllerRoles(identity);
  roles.push(...controllers.map((c) => ({ name: `system:controller:${c.name}`, rules: [...c.rules, event] })));
  const bindings: ComponentBinding[] = [
    { name: controllerManager, role: controllerManager, subjects: [{ kind: 'User', name: controllerManager }] },
    { name: scheduler, role: scheduler, subjects: [{ kind: 'User', name: scheduler }] },
    { name: 'system:volume-scheduler', role: 'system:volume-scheduler', subjects: [{ kind: 'User', name: scheduler }] },
    {
      name: `system:${short}-dns`,
      role: `system:${short}-dns`,
      subjects: [{ kind: 'ServiceAccount', name: `${short}-dns`, namespace: identity.systemNamespace }],
    },
    { name: 'system:node', role: 'system:node', subjects: [] },
    {
      name: 'system:node-proxier',
      role: 'system:node-proxier',
      subjects: [{ kind: 'User', name: `system:${short}-proxy` }],
    },
    ...controllers.map(
      (c): ComponentBinding => ({
        name: `system:controller:${c.name}`,
        role: `system:controller:${c.name}`,
        subjects: [{ kind: 'ServiceAccount', name: c.name, namespace: identity.systemNamespace }],
      }),
    ),
  ];
  return { roles, bindings };
}

/** A Role of upstream's NamespaceRoles(), and the RoleBinding of the same name. */
export interface NamespacedRole {
  namespace: string;
  name: string;
  rules: PolicyRule[];
  subjects: ComponentSubject[];
}

/** upstream NamespaceRoles()/NamespaceRoleBindings(): the bootstrap controllers' and leader-locking Roles. */
export function namespacePolicy(identity: Identity): NamespacedRole[] {
  const g = (ref: string) => groupFor(identity, ref);
  const short = shortOf(identity),
    sys = identity.systemNamespace;
  const event = r(['create', 'patch', 'update'], ['', g('events.plat.io')], ['events']);
  const sa = (name: string): ComponentSubject => ({ kind: 'ServiceAccount', name, namespace: sys });
  const user = (name: string): ComponentSubject => ({ kind: 'User', name });
  const scheduler = `system:${short}-scheduler`,
    controllerManager = `system:${short}-controller-manager`;
  return [
    {
      namespace: sys,
      name: 'system:controller:bootstrap-signer',
      rules: [r(READ, [''], ['secrets'])],
      subjects: [sa('bootstrap-signer')],
    },
    {
      namespace: sys,
      name: 'system:controller:token-cleaner',
      rules: [r(['delete', 'get', 'list', 'watch'], [''], ['secrets']), event],
      subjects: [sa('token-cleaner')],
    },
    {
      namespace: sys,
      name: 'system:controller:cloud-provider',
      rules: [r(['create', 'get', 'list', 'watch'], [''], ['configmaps'])],
      subjects: [sa('cloud-provider')],
    },
    {
      namespace: sys,
      name: 'extension-apiserver-authentication-reader',
      rules: [r(READ, [''], ['configmaps'], ['extension-apiserver-authentication'])],
      subjects: [user(controllerManager), user(scheduler)],
    },
    {
      namespace: sys,
      name: `system::leader-locking-${short}-controller-manager`,
      rules: [
        r(['watch'], [''], ['configmaps']),
        r(['get', 'update'], [''], ['configmaps'], [`${short}-controller-manager`]),
      ],
      subjects: [user(controllerManager), sa(`${short}-controller-manager`)],
    },
    {
      namespace: sys,
      name: `system::leader-locking-${short}-scheduler`,
      rules: [r(['watch'], [''], ['configmaps']), r(['get', 'update'], [''], ['configmaps'], [`${short}-scheduler`])],
      subjects: [user(scheduler), sa(`${short}-scheduler`)],
    },
    {
      namespace: identity.publicNamespace,
      name: 'system:controller:bootstrap-signer',
      rules: [r(READ, [''], ['configmaps']), r(['update'], [''], ['configmaps'], ['cluster-info']), event],
      subjects: [sa('bootstrap-signer')],
    },
  ];
}

/** upstream controller_policy.go, one role per controller (its events rule added by the caller). */
function controllerRoles(identity: Identity): ComponentRole[] {
  const g = (ref: string) => groupFor(identity, ref);
  const rbac = g('rbac.authorization.plat.io'),
    storage = g('storage.plat.io'),
    discovery = g('discovery.plat.io'),
    certs = g('certificates.plat.io');
  const authn = g('authentication.plat.io'),
    authz = g('authorization.plat.io');
  const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  return [
    {
      name: 'attachdetach-controller',
      rules: [
        r(['list', 'watch'], [''], ['persistentvolumes', 'persistentvolumeclaims', 'pods']),
        r(['get', 'list', 'watch'], [''], ['nodes']),
        r(['patch', 'update'], [''], ['nodes/status']),
        r(['get', 'create', 'delete', 'list', 'watch', 'patch'], [storage], ['volumeattachments']),
        r(READ, [storage], ['csidrivers', 'csinodes']),
      ],
    },
    {
      name: 'clusterrole-aggregation-controller',
      rules: [r(['escalate', 'get', 'list', 'patch', 'update', 'watch'], [rbac], ['clusterroles'])],
    },
    {
      name: 'cronjob-controller',
      rules: [
        r(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
        r(ALL, ['batch'], ['jobs']),
        r(['update'], ['batch'], ['cronjobs/status', 'cronjobs/finalizers']),
        r(['list', 'delete'], [''], ['pods']),
      ],
    },
    {
      name: 'daemon-set-controller',
      rules: [
        r(READ, ['apps', 'extensions'], ['daemonsets']),
        r(['update'], ['apps', 'extensions'], ['daemonsets/status', 'daemonsets/finalizers']),
        r(['list', 'watch'], [''], ['nodes']),
        r(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
        r(['create'], [''], ['pods/binding']),
        r(ALL, ['apps'], ['controllerrevisions']),
      ],
    },
    {
      name: 'deployment-controller',
      rules: [
        r(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['deployments']),
        r(['update'], ['apps', 'extensions'], ['deployments/status', 'deployments/finalizers']),
        r(ALL, ['apps', 'extensions'], ['replicasets']),
        r(['get', 'list', 'watch', 'update'], [''], ['pods']),
      ],
    },
    {
      name: 'disruption-controller',
      rules: [
        r(READ, ['apps', 'extensions'], ['deployments', 'replicasets', 'statefulsets']),
        r(READ, [''], ['replicationcontrollers', 'pods']),
        r(READ, ['policy'], ['poddisruptionbudgets']),
        r(['update'], ['policy'], ['poddisruptionbudgets/status']),
        r(['get'], ['*'], ['*/scale']),
        r(['patch', 'update'], [''], ['pods/status']),
      ],
    },
    {
      name: 'endpoint-controller',
      rules: [
        r(READ, [''], ['services', 'pods']),
        r(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']),
        r(['create'], [''], ['endpoints/restricted']),
      ],
    },
    {
      name: 'endpointslice-controller',
      rules: [
        r(READ, [''], ['services', 'pods', 'nodes']),
        r(['update'], [''], ['services/finalizers']),
        r(['create', 'update', 'delete', 'get', 'list', 'watch'], [discovery], ['endpointslices']),
      ],
    },
    {
      name: 'endpointslicemirroring-controller',
      rules: [
        r(READ, [''], ['services', 'endpoints']),
        r(['update'], [''], ['endpoints/finalizers']),
        r(['create', 'update', 'delete', 'get', 'list', 'watch'], [discovery], ['endpointslices']),
      ],
    },
    {
      name: 'ephemeral-volume-controller',
      rules: [
        r(READ, [''], ['pods']),
        r(['update'], [''], ['pods/finalizers']),
        r(['create', 'get', 'list', 'watch'], [''], ['persistentvolumeclaims']),
      ],
    },
    {
      name: 'expand-controller',
      rules: [
        r(['get', 'list', 'watch', 'update', 'patch'], [''], ['persistentvolumes']),
        r(['update', 'patch'], [''], ['persistentvolumeclaims/status']),
        r(READ, [''], ['persistentvolumeclaims']),
        r(READ, [storage], ['storageclasses']),
        r(['get'], [''], ['endpoints', 'services', 'secrets']),
      ],
    },
    {
      name: 'generic-garbage-collector',
      rules: [r(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])],
    },
    {
      name: 'horizontal-pod-autoscaler',
      rules: [
        r(READ, ['autoscaling'], ['horizontalpodautoscalers']),
        r(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
        r(['get', 'update'], ['*'], ['*/scale']),
        r(['list'], [''], ['pods']),
        r(['list'], [g('metrics.plat.io')], ['pods']),
        r(['get', 'list', 'watch'], [g('custom.metrics.plat.io'), g('external.metrics.plat.io')], ['*']),
      ],
    },
    {
      name: 'job-controller',
      rules: [
        r(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
        r(['update'], ['batch'], ['jobs/status', 'jobs/finalizers']),
        r(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
      ],
    },
    {
      name: 'namespace-controller',
      rules: [
        r(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
        r(['update'], [''], ['namespaces/finalize', 'namespaces/status']),
        r(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
      ],
    },
    {
      name: 'node-controller',
      rules: [
        r(['get', 'list', 'update', 'delete', 'patch'], [''], ['nodes']),
        r(['patch', 'update'], [''], ['nodes/status']),
        r(['update'], [''], ['pods/status']),
        r(['list', 'delete'], [''], ['pods']),
      ],
    },
    {
      name: 'persistent-volume-binder',
      rules: [
        r(['create', 'delete', 'get', 'list', 'update', 'watch'], [''], ['persistentvolumes']),
        r(['update'], [''], ['persistentvolumes/status']),
        r(['get', 'list', 'update', 'watch'], [''], ['persistentvolumeclaims']),
        r(['update'], [''], ['persistentvolumeclaims/status']),
        r(READ, [''], ['pods', 'nodes']),
        r(['create', 'delete', 'get'], [''], ['endpoints', 'services']),
        r(['get'], [''], ['secrets']),
        r(READ, [storage], ['storageclasses']),
      ],
    },
    {
      name: 'pod-garbage-collector',
      rules: [
        r(['list', 'watch', 'delete'], [''], ['pods']),
        r(['patch'], [''], ['pods/status']),
        r(['get', 'list'], [''], ['nodes']),
      ],
    },
    {
      name: 'replicaset-controller',
      rules: [
        r(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['replicasets']),
        r(['update'], ['apps', 'extensions'], ['replicasets/status', 'replicasets/finalizers']),
        r(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
      ],
    },
    {
      name: 'replication-controller',
      rules: [
        r(['get', 'list', 'watch', 'update'], [''], ['replicationcontrollers']),
        r(['update'], [''], ['replicationcontrollers/status', 'replicationcontrollers/finalizers']),
        r(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
      ],
    },
    {
      name: 'resourcequota-controller',
      rules: [r(['list', 'watch'], ['*'], ['*']), r(['update'], [''], ['resourcequotas/status'])],
    },
    { name: 'route-controller', rules: [r(['list'], [''], ['nodes']), r(['patch'], [''], ['nodes/status'])] },
    { name: 'service-account-controller', rules: [r(['create'], [''], ['serviceaccounts'])] },
    {
      name: 'service-controller',
      rules: [
        r(READ, [''], ['services']),
        r(['patch', 'update'], [''], ['services/status']),
        r(['list', 'watch'], [''], ['nodes']),
      ],
    },
    {
      name: 'statefulset-controller',
      rules: [
        r(['list', 'watch'], [''], ['pods']),
        r(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
        r(READ, ['apps'], ['statefulsets']),
        r(['update'], ['apps'], ['statefulsets/status', 'statefulsets/finalizers']),
        r(ALL, ['apps'], ['controllerrevisions']),
        r(['get', 'create'], [''], ['persistentvolumeclaims']),
        r(['update', 'delete'], [''], ['persistentvolumeclaims']),
      ],
    },
    { name: 'ttl-controller', rules: [r(['update', 'patch', 'list', 'watch'], [''], ['nodes'])] },
    {
      name: 'certificate-controller',
      rules: [
        r(['get', 'list', 'watch', 'delete'], [certs], ['certificatesigningrequests']),
        r(['update'], [certs], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
        r(['approve', 'sign'], [certs], ['signers']),
        r(['create'], [authz], ['subjectaccessreviews']),
        r(['create'], [authn], ['tokenreviews']),
      ],
    },
    {
      name: 'pvc-protection-controller',
      rules: [r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']), r(READ, [''], ['pods'])],
    },
    { name: 'pv-protection-controller', rules: [r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumes'])] },
    { name: 'ttl-after-finished-controller', rules: [r(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs'])] },
    { name: 'root-ca-cert-publisher', rules: [r(['create', 'update'], [''], ['configmaps'])] },
    {
      name: 'legacy-service-account-token-cleaner',
      rules: [
        r(['get'], [''], ['configmaps'], [`${shortOf(identity)}-apiserver-legacy-service-account-token-tracking`]),
        r(['patch', 'delete'], [''], ['secrets']),
      ],
    },
    {
      name: 'validatingadmissionpolicy-status-controller',
      rules: [
        r(READ, [g('admissionregistration.plat.io')], ['validatingadmissionpolicies']),
        r(['get', 'patch', 'update'], [g('admissionregistration.plat.io')], ['validatingadmissionpolicies/status']),
      ],
    },
  ];
}
