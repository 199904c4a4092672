/**
 * The default ClusterRoles and ClusterRoleBindings (upstream plugin/pkg/auth/authorizer/rbac/
 * bootstrappolicy), in the served domain. admin, edit and view aggregate the
 * `system:aggregate-to-*` roles (and any user role carrying the same labels); edit is
 * aggregated into admin and view into edit, as upstream.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import type { PolicyRule } from './rbac-rules.js';
import { componentPolicy, namespacePolicy } from './bootstrap-components.js';
import { nodeRules } from './node.js';

export interface DefaultRole {
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations: Record<string, string> };
  rules: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
}
export interface DefaultBinding {
  metadata: DefaultRole['metadata'];
  roleRef: { apiGroup: string; kind: 'ClusterRole' | 'Role'; name: string };
  subjects: (
    | { apiGroup: string; kind: 'Group' | 'User'; name: string }
    | { kind: 'ServiceAccount'; name: string; namespace: string }
  )[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
});
const urls = (verbs: string[], ...nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

/** The identity's names of the bootstrapping label and the autoupdate annotation. */
export function policyKeys(identity: Identity): {
  bootstrapping: string;
  autoupdate: string;
  aggregateTo: (r: string) => string;
} {
  const rbac = groupFor(identity, 'rbac.authorization.plat.io');
  return {
    bootstrapping: `${identity.product}.io/bootstrapping`,
    autoupdate: `rbac.authorization.${identity.product}.io/autoupdate`,
    aggregateTo: (r) => `${rbac}/aggregate-to-${r}`,
  };
}

export interface DefaultPolicy {
  clusterRoles: DefaultRole[];
  clusterRoleBindings: DefaultBinding[];
  roles: DefaultRole[];
  roleBindings: DefaultBinding[];
}

/** Resource lists of the aggregated edit and view roles (upstream's order). */
const EDIT_CORE = [
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'serviceaccounts',
  'services',
  'services/proxy',
  'persistentvolumeclaims',
  'configmaps',
  'secrets',
  'events',
];
const EDIT_APPS = [
  'statefulsets',
  'statefulsets/scale',
  'daemonsets',
  'deployments',
  'deployments/scale',
  'deployments/rollback',
  'replicasets',
  'replicasets/scale',
];
const EDIT_EXTENSIONS = [
  'daemonsets',
  'deployments',
  'deployments/scale',
  'deployments/rollback',
  'ingresses',
  'replicasets',
  'replicasets/scale',
  'replicationcontrollers/scale',
  'networkpolicies',
];
const VIEW_CORE = [
  'pods',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'serviceaccounts',
  'services',
  'services/status',
  'endpoints',
  'persistentvolumeclaims',
  'persistentvolumeclaims/status',
  'configmaps',
];
const VIEW_CORE_STATUS = [
  'limitranges',
  'resourcequotas',
  'bindings',
  'events',
  'pods/status',
  'resourcequotas/status',
  'namespaces/status',
  'replicationcontrollers/status',
  'pods/log',
];
const VIEW_APPS = [
  'controllerrevisions',
  'statefulsets',
  'statefulsets/scale',
  'statefulsets/status',
  'daemonsets',
  'daemonsets/status',
  'deployments',
  'deployments/scale',
  'deployments/status',
  'replicasets',
  'replicasets/scale',
  'replicasets/status',
];
const VIEW_EXTENSIONS = [
  'daemonsets',
  'daemonsets/status',
  'deployments',
  'deployments/scale',
  'deployments/status',
  'ingresses',
  'ingresses/status',
  'replicasets',
  'replicasets/scale',
  'replicasets/status',
  'replicationcontrollers/scale',
  'networkpolicies',
];

/** The names and builders the default policy's tables share (in the served domain). */
function policyKit(identity: Identity) {
  const g = (ref: string) => groupFor(identity, ref);
  const keys = policyKeys(identity);
  const meta = (name: string, labels: Record<string, string> = {}) => ({
    name,
    labels: { [keys.bootstrapping]: 'rbac-defaults', ...labels },
    annotations: { [keys.autoupdate]: 'true' },
  });
  return {
    rbac: g('rbac.authorization.plat.io'),
    authz: g('authorization.plat.io'),
    authn: g('authentication.plat.io'),
    networking: g('networking.plat.io'),
    discovery: g('discovery.plat.io'),
    meta,
    label: (to: string) => ({ [keys.aggregateTo(to)]: 'true' }),
    aggregating: (name: string, to: string, labels: Record<string, string> = {}): DefaultRole => ({
      metadata: meta(name, labels),
      rules: [],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [keys.aggregateTo(to)]: 'true' } }] },
    }),
  };
}

type PolicyKit = ReturnType<typeof policyKit>;

/** cluster-admin, and admin, edit and view with the system:aggregate-to-* roles they aggregate. */
function aggregatedRoles(k: PolicyKit): DefaultRole[] {
  const { meta, label, aggregating, authz, rbac, discovery, networking } = k;
  return [
    { metadata: meta('cluster-admin'), rules: [rule(['*'], ['*'], ['*']), urls(['*'], '*')] },
    aggregating('admin', 'admin'),
    aggregating('edit', 'edit', label('admin')),
    aggregating('view', 'view', label('edit')),
    {
      metadata: meta('system:aggregate-to-admin', label('admin')),
      rules: [
        rule(['create'], [authz], ['localsubjectaccessreviews']),
        rule([...READ, ...WRITE], [rbac], ['roles', 'rolebindings']),
      ],
    },
    {
      metadata: meta('system:aggregate-to-edit', label('edit')),
      rules: [
        rule(READ, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(WRITE, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [''], ['pods/eviction']),
        rule(WRITE, [''], EDIT_CORE),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(WRITE, ['apps'], EDIT_APPS),
        rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
        rule(WRITE, ['batch'], ['jobs', 'cronjobs']),
        rule(WRITE, ['extensions'], EDIT_EXTENSIONS),
        rule(WRITE, ['policy'], ['poddisruptionbudgets']),
        rule(WRITE, [networking], ['networkpolicies', 'ingresses']),
      ],
    },
    {
      metadata: meta('system:aggregate-to-view', label('view')),
      rules: [
        rule(READ, [''], VIEW_CORE),
        rule(READ, [''], VIEW_CORE_STATUS),
        rule(READ, [''], ['namespaces']),
        rule(READ, [discovery], ['endpointslices']),
        rule(READ, ['apps'], VIEW_APPS),
        rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(READ, ['extensions'], VIEW_EXTENSIONS),
        rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    },
  ];
}

/** The non-resource URLs of system:discovery, system:monitoring and the issuer discovery role. */
const DISCOVERY_URLS = [
  '/livez',
  '/readyz',
  '/healthz',
  '/version',
  '/version/',
  '/openapi',
  '/openapi/*',
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
];
const MONITORING_URLS = [
  '/metrics',
  '/metrics/slis',
  '/livez',
  '/readyz',
  '/healthz',
  '/livez/*',
  '/readyz/*',
  '/healthz/*',
];
const ISSUER_DISCOVERY_URLS = [
  '/.well-known/openid-configuration',
  '/.well-known/openid-configuration/',
  '/openid/v1/jwks',
  '/openid/v1/jwks/',
];

/** The discovery, basic-user, public-info, monitoring and issuer-discovery roles. */
function systemRoles(k: PolicyKit): DefaultRole[] {
  const { meta, authz, authn } = k;
  return [
    {
      metadata: meta('system:discovery'),
      rules: [urls(['get'], ...DISCOVERY_URLS)],
    },
    {
      metadata: meta('system:basic-user'),
      rules: [
        rule(['create'], [authz], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
        rule(['create'], [authn], ['selfsubjectreviews']),
      ],
    },
    {
      metadata: meta('system:public-info-viewer'),
      rules: [urls(['get'], '/livez', '/readyz', '/healthz', '/version', '/version/')],
    },
    {
      metadata: meta('system:monitoring'),
      rules: [urls(['get'], ...MONITORING_URLS)],
    },
    {
      metadata: meta('system:service-account-issuer-discovery'),
      rules: [urls(['get'], ...ISSUER_DISCOVERY_URLS)],
    },
  ];
}

/** The bindings of the roles above, then the components' roles and bindings (src/auth/authz/bootstrap-components.ts). */
function componentsInto(identity: Identity, k: PolicyKit, clusterRoles: DefaultRole[]): DefaultBinding[] {
  const { meta, rbac } = k;
  const bind = (name: string, ...groups: string[]): DefaultBinding => ({
    metadata: meta(name),
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name },
    subjects: groups.map((n) => ({ apiGroup: rbac, kind: 'Group', name: n })),
  });
  const clusterRoleBindings: DefaultBinding[] = [
    bind('cluster-admin', 'system:masters'),
    bind('system:discovery', 'system:authenticated'),
    bind('system:basic-user', 'system:authenticated'),
    bind('system:public-info-viewer', 'system:authenticated', 'system:unauthenticated'),
    bind('system:monitoring', 'system:monitoring'),
    bind('system:service-account-issuer-discovery', 'system:serviceaccounts'),
  ];
  const components = componentPolicy(identity, nodeRules(identity, false));
  for (const c of components.roles) clusterRoles.push({ metadata: meta(c.name), rules: c.rules });
  for (const b of components.bindings) {
    clusterRoleBindings.push({
      metadata: meta(b.name),
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: b.role },
      subjects: b.subjects.map((x) =>
        x.kind === 'ServiceAccount' ? { ...x } : { apiGroup: rbac, kind: x.kind, name: x.name },
      ),
    });
  }
  return clusterRoleBindings;
}

/** The namespaced Roles and RoleBindings of the components. */
function namespaced(identity: Identity, k: PolicyKit): { roles: DefaultRole[]; roleBindings: DefaultBinding[] } {
  const { meta, rbac } = k;
  const roles: DefaultRole[] = [],
    roleBindings: DefaultBinding[] = [];
  for (const n of namespacePolicy(identity)) {
    roles.push({ metadata: { ...meta(n.name), namespace: n.namespace }, rules: n.rules });
    roleBindings.push({
      metadata: { ...meta(n.name), namespace: n.namespace },
      roleRef: { apiGroup: rbac, kind: 'Role', name: n.name },
      subjects: n.subjects.map((x) =>
        x.kind === 'ServiceAccount' ? { ...x } : { apiGroup: rbac, kind: x.kind, name: x.name },
      ),
    });
  }
  return { roles, roleBindings };
}

export function defaultPolicy(identity: Identity): DefaultPolicy {
  const k = policyKit(identity);
  const clusterRoles = [...aggregatedRoles(k), ...systemRoles(k)];
  const clusterRoleBindings = componentsInto(identity, k, clusterRoles);
  return { clusterRoles, clusterRoleBindings, ...namespaced(identity, k) };
}
