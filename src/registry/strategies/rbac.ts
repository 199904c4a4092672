/**
 * RBAC: rule shapes (verbs always; resource rules need apiGroups and resources; non-resource
 * URLs only in ClusterRoles), role references and subjects of bindings, roleRef fixed. The RBAC
 * group is the served one (`rbac.authorization.<domain>`), read from the object's apiVersion.
 */
import type { KubeObject } from '../../api/object.js';
import type { Role, RoleBinding } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { invalid, notSupported, required, same, type Cause } from './field-errors.js';

/** the served RBAC group: the store stamps apiVersion before validation */
/** A rule or subject as written: any field may be missing or of another type until checked. */
type Raw = Readonly<Record<string, unknown>>;

const rbacGroupOf = (obj: KubeObject | undefined): string =>
  String(obj?.apiVersion ?? 'rbac.authorization.plat.io/v1').split('/')[0]!;
const base: ResourceStrategy = { ...DEFAULT_STRATEGY, nameRule: 'path', allowCreateOnUpdate: true };

/** upstream ValidatePolicyRule */
export function validateRule(rule: Raw | null | undefined, namespaced: boolean, path: string): Cause[] {
  const out: Cause[] = [];
  const has = (f: string) => Array.isArray(rule?.[f]) && rule[f].length > 0;
  if (!has('verbs')) out.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (has('nonResourceURLs')) {
    if (namespaced)
      out.push(
        invalid(`${path}.nonResourceURLs`, rule?.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'),
      );
    if (has('apiGroups') || has('resources') || has('resourceNames')) {
      out.push(
        invalid(
          `${path}.nonResourceURLs`,
          rule?.nonResourceURLs,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    }
    return out;
  }
  if (!has('apiGroups')) out.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!has('resources')) out.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return out;
}

function role(namespaced: boolean): ResourceStrategy<Role> {
  return {
    ...base,
    validate: (obj) =>
      (Array.isArray(obj.rules) ? obj.rules : []).flatMap((r: Raw, i: number) =>
        validateRule(r, namespaced, `rules[${i}]`),
      ),
  };
}

function validateSubject(s: Raw | null | undefined, namespaced: boolean, path: string, rbacGroup: string): Cause[] {
  const out: Cause[] = [];
  if (!s?.name) out.push(required(`${path}.name`));
  switch (s?.kind) {
    case 'ServiceAccount':
      if (s.apiGroup) out.push(notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) out.push(required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== rbacGroup) out.push(notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [rbacGroup]));
      break;
    default:
      out.push(notSupported(`${path}.kind`, s?.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return out;
}

function binding(namespaced: boolean): ResourceStrategy<RoleBinding> {
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  return {
    ...base,
    validate(obj) {
      const ref = obj.roleRef ?? {};
      const out: Cause[] = [];
      const rbacGroup = rbacGroupOf(obj);
      if (ref.apiGroup !== rbacGroup) out.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [rbacGroup]));
      if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind))
        out.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
      if (!ref.name) out.push(required('roleRef.name'));
      (Array.isArray(obj.subjects) ? obj.subjects : []).forEach((s: Raw, i: number) =>
        out.push(...validateSubject(s, namespaced, `subjects[${i}]`, rbacGroup)),
      );
      return out;
    },
    validateUpdate: (obj, old) =>
      same(obj.roleRef, old.roleRef) ? [] : [invalid('roleRef', obj.roleRef ?? null, 'cannot change roleRef')],
  };
}

export const roleStrategy = role(true);
export const clusterRoleStrategy = role(false);
export const roleBindingStrategy = binding(true);
export const clusterRoleBindingStrategy = binding(false);
