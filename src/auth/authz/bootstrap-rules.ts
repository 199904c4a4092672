/**
 * The vocabulary of the bootstrap component and controller roles (bootstrap-components.ts,
 * controller-roles.ts): the rule builder, the read verbs, the role and binding shapes.
 */
import type { Identity } from '../../api/identity.js';
import type { PolicyRule } from './rbac-rules.js';

export const READ = ['get', 'list', 'watch'];
export const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
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
