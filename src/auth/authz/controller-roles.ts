/**
 * The `system:controller:<name>` ClusterRoles of the built-in controllers (upstream
 * controller_policy.go), in the served domain; bootstrap-components.ts binds each to its
 * controller's service account.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import { type ComponentRole, r, READ, shortOf } from './bootstrap-rules.js';

/** The served names the controller roles use, resolved once per call of controllerRoles. */
interface RoleGroups {
  identity: Identity;
  g: (ref: string) => string;
  rbac: string;
  storage: string;
  discovery: string;
  certs: string;
  authn: string;
  authz: string;
  ALL: string[];
}

/** upstream controller_policy.go, one role per controller (its events rule added by the caller). */
export function controllerRoles(identity: Identity): ComponentRole[] {
  const g = (ref: string) => groupFor(identity, ref);
  const rbac = g('rbac.authorization.plat.io'),
    storage = g('storage.plat.io'),
    discovery = g('discovery.plat.io'),
    certs = g('certificates.plat.io');
  const authn = g('authentication.plat.io'),
    authz = g('authorization.plat.io');
  const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  const groups: RoleGroups = { identity, g, rbac, storage, discovery, certs, authn, authz, ALL };
  return [
    ...rolesAttachdetachToDeployment(groups),
    ...rolesDisruptionToEphemeralVolume(groups),
    ...rolesExpandToNamespace(groups),
    ...rolesNodeToReplication(groups),
    ...rolesResourcequotaToRootCaCertPublisher(groups),
    ...rolesLegacyTokenCleanerToAdmissionPolicyStatus(groups),
  ];
}

/** controller_policy.go roles, attachdetach-controller to deployment-controller (in controllerRoles' order). */
function rolesAttachdetachToDeployment(groups: RoleGroups): ComponentRole[] {
  const { rbac, storage, ALL } = groups;
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
  ];
}

/** controller_policy.go roles, disruption-controller to ephemeral-volume-controller (in controllerRoles' order). */
function rolesDisruptionToEphemeralVolume(groups: RoleGroups): ComponentRole[] {
  const { discovery } = groups;
  return [
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
  ];
}

/** controller_policy.go roles, expand-controller to namespace-controller (in controllerRoles' order). */
function rolesExpandToNamespace(groups: RoleGroups): ComponentRole[] {
  const { g, storage } = groups;
  return [
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
  ];
}

/** controller_policy.go roles, node-controller to replication-controller (in controllerRoles' order). */
function rolesNodeToReplication(groups: RoleGroups): ComponentRole[] {
  const { storage } = groups;
  return [
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
  ];
}

/** controller_policy.go roles, resourcequota-controller to root-ca-cert-publisher (in controllerRoles' order). */
function rolesResourcequotaToRootCaCertPublisher(groups: RoleGroups): ComponentRole[] {
  const { certs, authn, authz, ALL } = groups;
  return [
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
  ];
}

/** controller_policy.go roles, legacy-service-account-token-cleaner to validatingadmissionpolicy-status-controller (in controllerRoles' order). */
function rolesLegacyTokenCleanerToAdmissionPolicyStatus(groups: RoleGroups): ComponentRole[] {
  const { identity, g } = groups;
  return [
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
