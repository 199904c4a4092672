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

export function defaultPolicy(identity: Identity): DefaultPolicy {
  const g = (ref: string) => groupFor(identity, ref);
  const rbac = g('rbac.authorization.plat.io'),
    authz = g('authorization.plat.io'),
    authn = g('authentication.plat.io');
  const networking = g('networking.plat.io'),
    discovery = g('discovery.plat.io');
  const keys = policyKeys(identity);
  const meta = (name: string, labels: Record<string, string> = {}) => ({
    name,
    labels: { [keys.bootstrapping]: 'rbac-defaults', ...labels },
    annotations: { [keys.autoupdate]: 'true' },
  });
  const aggregating = (name: string, to: string, labels: Record<string, string> = {}): DefaultRole => ({
    metadata: meta(name, labels),
    rules: [],
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [keys.aggregateTo(to)]: 'true' } }] },
  });
  const label = (to: string) => ({ [keys.aggregateTo(to)]: 'true' });
  const clusterRoles: DefaultRole[] = [
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
        rule(
          WRITE,
          [''],
          [
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/proxy',
            'persistentvolumeclaims',
            'configmaps',
            'secrets',
            'events',
          ],
        ),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(
          WRITE,
          ['apps'],
          [
            'statefulsets',
            'statefulsets/scale',
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'replicasets',
            'replicasets/scale',
          ],
        ),
        rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
        rule(WRITE, ['batch'], ['jobs', 'cronjobs']),
        rule(
          WRITE,
          ['extensions'],
          [
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'ingresses',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
            'networkpolicies',
          ],
        ),
        rule(WRITE, ['policy'], ['poddisruptionbudgets']),
        rule(WRITE, [networking], ['networkpolicies', 'ingresses']),
      ],
    },
    {
      metadata: meta('system:aggregate-to-view', label('view')),
      rules: [
        rule(
          READ,
          [''],
          [
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
          ],
        ),
        rule(
          READ,
          [''],
          [
            'limitranges',
            'resourcequotas',
            'bindings',
            'events',
            'pods/status',
            'resourcequotas/status',
            'namespaces/status',
            'replicationcontrollers/status',
            'pods/log',
          ],
        ),
        rule(READ, [''], ['namespaces']),
        rule(READ, [discovery], ['endpointslices']),
        rule(
          READ,
          ['apps'],
          [
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
          ],
        ),
        rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(
          READ,
          ['extensions'],
          [
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
          ],
        ),
        rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    },
    {
      metadata: meta('system:discovery'),
      rules: [
        urls(
          ['get'],
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
        ),
      ],
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
      rules: [
        urls(
          ['get'],
          '/metrics',
          '/metrics/slis',
          '/livez',
          '/readyz',
          '/healthz',
          '/livez/*',
          '/readyz/*',
          '/healthz/*',
        ),
      ],
    },
    {
      metadata: meta('system:service-account-issuer-discovery'),
      rules: [
        urls(
          ['get'],
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ),
      ],
    },
  ];
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
  return { clusterRoles, clusterRoleBindings, roles, roleBindings };
}
