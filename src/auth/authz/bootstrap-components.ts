/**
 * The default roles of the core components and built-in controllers (upstream bootstrappolicy
 * ClusterRoles() beyond the user-facing ones, and controller_policy.go), in the served domain:
 * `system:<short>-scheduler`, `system:<short>-controller-manager`, `system:node`,
 * `system:node-proxier`, `system:node-bootstrapper`, `system:auth-delegator`, ... and one
 * `system:controller:<name>` ClusterRole per controller, bound to the controller's service
 * account in the system namespace.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import {
  type ComponentRole,
  type ComponentBinding,
  type ComponentSubject,
  shortOf,
  READ,
  r,
} from './bootstrap-rules.js';
import { controllerRoles } from './controller-roles.js';
import type { PolicyRule } from './rbac-rules.js';

/** The served names the component roles use, resolved once per call of componentPolicy. */
interface ComponentNames {
  identity: Identity;
  nodeRules: PolicyRule[];
  short: string;
  authn: string;
  authz: string;
  certs: string;
  storage: string;
  coordination: string;
  discovery: string;
  event: PolicyRule;
  scheduler: string;
  controllerManager: string;
  signer: (name: string) => string;
}

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
  const names: ComponentNames = {
    identity,
    nodeRules,
    short,
    authn,
    authz,
    certs,
    storage,
    coordination,
    discovery,
    event,
    scheduler,
    controllerManager,
    signer,
  };
  const roles: ComponentRole[] = [
    ...nodeAndAddonRoles(names),
    ...volumeAndSchedulerRoles(names),
    ...controllerManagerAndCertificateRoles(names),
  ];
  const controllers = controllerRoles(identity);
  roles.push(...controllers.map((c) => ({ name: `system:controller:${c.name}`, rules: [...c.rules, event] })));
  const bindings = componentBindings(identity, short, scheduler, controllerManager, controllers);
  return { roles, bindings };
}

/** bootstrappolicy roles: auth delegator, node, proxier, kubelet API, DNS, heapster (in componentPolicy's order). */
function nodeAndAddonRoles(names: ComponentNames): ComponentRole[] {
  const { nodeRules, short, authn, authz, certs, discovery, event } = names;
  return [
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
  ];
}

/** bootstrappolicy roles: volume provisioner, volume scheduler, the scheduler (in componentPolicy's order). */
function volumeAndSchedulerRoles(names: ComponentNames): ComponentRole[] {
  const { short, authn, authz, storage, coordination, event, scheduler } = names;
  return [
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
  ];
}

/** bootstrappolicy roles: the controller manager, CSR creation and the signer approvers (in componentPolicy's order). */
function controllerManagerAndCertificateRoles(names: ComponentNames): ComponentRole[] {
  const { identity, short, authn, authz, certs, coordination, event, controllerManager, signer } = names;
  return [
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
}

/** The bindings of the component roles: users, the DNS service account, one service account per controller. */
function componentBindings(
  identity: Identity,
  short: string,
  scheduler: string,
  controllerManager: string,
  controllers: ComponentRole[],
): ComponentBinding[] {
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
  return bindings;
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
