/**
 * The RBAC index: every Role, ClusterRole, RoleBinding and ClusterRoleBinding, loaded from the
 * objects the actors report at start and kept current from the committed change events (the
 * front thread sees them before any write is acknowledged, so a client that just created a
 * binding is authorized by it on its next request). It answers upstream's VisitRulesFor.
 * `generation` changes with every RBAC change, so callers may cache what they derive.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import { labelSelectorFromObject, type LabelSelector } from '../../api/selectors.js';
import type { CachedObject, ChangeEvent } from '../../actors/protocol.js';
import { typeKeyOf } from '../../actors/routing.js';
import { SA_PREFIX, type UserInfo } from '../../api/user.js';
import type { PolicyRule } from './rbac-rules.js';
import type { KubeObject } from '../../api/object.js';

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}
export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

interface RoleEntry {
  rules: PolicyRule[];
  labels: Record<string, string>;
  /** compiled aggregationRule.clusterRoleSelectors; undefined when the role does not aggregate */
  selectors?: LabelSelector[];
}

export interface BindingEntry {
  name: string;
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
}

/** A role reference that does not resolve: `kind` is Role or ClusterRole. */
export interface MissingRole {
  missing: { kind: string; name: string };
}

/** Called per rule with the description of the binding that grants it; false stops the walk. */
export type RuleVisitor = (source: string, rule: PolicyRule) => boolean;

const rulesOf = (o: RbacObject): PolicyRule[] =>
  Array.isArray(o.rules) ? o.rules.filter((r: unknown) => r && typeof r === 'object') : [];

/** A stored Role, ClusterRole or (Cluster)RoleBinding: its fields are checked as they are read. */
interface RbacObject extends KubeObject {
  rules?: unknown;
  aggregationRule?: { clusterRoleSelectors?: unknown };
  roleRef?: { kind?: unknown; name?: unknown; apiGroup?: string };
  subjects?: unknown;
}

export class RbacIndex {
  generation = 0;
  readonly group: string;
  private readonly keys: Record<'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings', string>;
  private readonly typeKeys: Set<string>;
  private readonly clusterRoles = new Map<string, RoleEntry>();
  /** `<namespace>/<name>` */
  private readonly roles = new Map<string, RoleEntry>();
  private readonly clusterRoleBindings = new Map<string, BindingEntry>();
  /** namespace -> name -> binding */
  private readonly roleBindings = new Map<string, Map<string, BindingEntry>>();
  /** effective rules of aggregated ClusterRoles, valid for `generation` */
  private aggregated = new Map<string, PolicyRule[]>();

  constructor(identity: Identity) {
    this.group = groupFor(identity, 'rbac.authorization.plat.io');
    const k = (r: string) => typeKeyOf(this.group, r);
    this.keys = {
      roles: k('roles'),
      clusterroles: k('clusterroles'),
      rolebindings: k('rolebindings'),
      clusterrolebindings: k('clusterrolebindings'),
    };
    this.typeKeys = new Set(Object.values(this.keys));
  }

  /** The objects every actor loaded at start (before any change event). */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects)
      if (this.typeKeys.has(o.typeKey)) this.put(o.typeKey, o.namespace, o.name, JSON.parse(o.json));
    this.generation++;
  }

  /** Committed changes of any type; only RBAC ones are parsed. */
  apply(events: readonly ChangeEvent[]): void {
    let changed = false;
    for (const ev of events) {
      if (!this.typeKeys.has(ev.typeKey)) continue;
      changed = true;
      if (ev.type === 'DELETED') this.remove(ev.typeKey, ev.namespace, ev.name);
      else this.put(ev.typeKey, ev.namespace, ev.name, JSON.parse(ev.json));
    }
    if (changed) {
      this.generation++;
      this.aggregated = new Map();
    }
  }

  private put(typeKey: string, namespace: string, name: string, obj: RbacObject): void {
    switch (typeKey) {
      case this.keys.clusterroles: {
        const agg = obj.aggregationRule;
        const e: RoleEntry = { rules: rulesOf(obj), labels: obj.metadata?.labels ?? {} };
        if (agg && typeof agg === 'object') e.selectors = compileSelectors(agg.clusterRoleSelectors);
        this.clusterRoles.set(name, e);
        break;
      }
      case this.keys.roles:
        this.roles.set(`${namespace}/${name}`, { rules: rulesOf(obj), labels: obj.metadata?.labels ?? {} });
        break;
      case this.keys.clusterrolebindings:
        this.clusterRoleBindings.set(name, binding(obj, name, ''));
        break;
      case this.keys.rolebindings: {
        let m = this.roleBindings.get(namespace);
        if (!m) this.roleBindings.set(namespace, (m = new Map()));
        m.set(name, binding(obj, name, namespace));
        break;
      }
    }
  }

  private remove(typeKey: string, namespace: string, name: string): void {
    if (typeKey === this.keys.clusterroles) this.clusterRoles.delete(name);
    else if (typeKey === this.keys.roles) this.roles.delete(`${namespace}/${name}`);
    else if (typeKey === this.keys.clusterrolebindings) this.clusterRoleBindings.delete(name);
    else {
      const m = this.roleBindings.get(namespace);
      m?.delete(name);
      if (m?.size === 0) this.roleBindings.delete(namespace);
    }
  }

  /**
   * The rules a role reference grants (upstream GetRoleReferenceRules): a Role is looked up in
   * the binding's namespace. An aggregated ClusterRole (aggregationRule) has the rules of every
   * other ClusterRole one of its selectors matches, resolved now, as the aggregation
   * controller would have written them.
   */
  roleRefRules(ref: RoleRef, bindingNamespace: string): PolicyRule[] | MissingRole {
    if (ref.kind === 'Role') {
      const r = bindingNamespace ? this.roles.get(`${bindingNamespace}/${ref.name}`) : undefined;
      return r ? r.rules : { missing: { kind: 'Role', name: ref.name } };
    }
    if (ref.kind === 'ClusterRole')
      return this.clusterRoleRules(ref.name, new Set()) ?? { missing: { kind: 'ClusterRole', name: ref.name } };
    return { missing: { kind: ref.kind, name: ref.name } };
  }

  private clusterRoleRules(name: string, visiting: Set<string>): PolicyRule[] | undefined {
    const role = this.clusterRoles.get(name);
    if (!role?.selectors) return role?.rules;
    const memo = this.aggregated.get(name);
    if (memo) return memo;
    visiting.add(name);
    const out: PolicyRule[] = [];
    const seen = new Set<string>();
    for (const other of [...this.clusterRoles.keys()].sort()) {
      if (other === name || visiting.has(other)) continue;
      if (!role.selectors.some((s) => s.matches(this.clusterRoles.get(other)!.labels))) continue;
      for (const rule of this.clusterRoleRules(other, visiting) ?? []) {
        const key = JSON.stringify(rule);
        if (!seen.has(key)) {
          seen.add(key);
          out.push(rule);
        }
      }
    }
    visiting.delete(name);
    this.aggregated.set(name, out);
    return out;
  }

  /** Every aggregated ClusterRole with its stored rules and the rules its selectors gather now. */
  aggregatedRoles(): { name: string; stored: PolicyRule[]; effective: PolicyRule[] }[] {
    const out: { name: string; stored: PolicyRule[]; effective: PolicyRule[] }[] = [];
    for (const [name, r] of this.clusterRoles)
      if (r.selectors) out.push({ name, stored: r.rules, effective: this.clusterRoleRules(name, new Set())! });
    return out;
  }

  /**
   * upstream VisitRulesFor: the rules of every ClusterRoleBinding naming the user, then, for a
   * namespace, of every RoleBinding there. A binding whose role is missing is reported once
   * through `onMissing` (the authorizer's denial reason) and skipped.
   */
  visitRulesFor(
    user: UserInfo,
    namespace: string,
    visit: RuleVisitor,
    onMissing: (m: MissingRole['missing'], b: BindingEntry) => void,
  ): void {
    for (const b of this.clusterRoleBindings.values()) if (!this.visitBinding(user, b, '', visit, onMissing)) return;
    if (!namespace) return;
    for (const b of this.roleBindings.get(namespace)?.values() ?? [])
      if (!this.visitBinding(user, b, namespace, visit, onMissing)) return;
  }

  private visitBinding(
    user: UserInfo,
    b: BindingEntry,
    namespace: string,
    visit: RuleVisitor,
    onMissing: (m: MissingRole['missing'], b: BindingEntry) => void,
  ): boolean {
    const i = b.subjects.findIndex((s) => appliesTo(user, s, namespace));
    if (i < 0) return true;
    const rules = this.roleRefRules(b.roleRef, namespace);
    if (!Array.isArray(rules)) {
      onMissing(rules.missing, b);
      return true;
    }
    const source = describe(b, b.subjects[i]!);
    for (const r of rules) if (!visit(source, r)) return false;
    return true;
  }
}

function compileSelectors(list: unknown): LabelSelector[] {
  const out: LabelSelector[] = [];
  // a selector that does not compile selects nothing, as the aggregation controller skips it
  for (const s of Array.isArray(list) ? list : [])
    try {
      out.push(labelSelectorFromObject(s ?? {}));
    } catch {
      /* skipped */
    }
  return out;
}

function binding(obj: RbacObject, name: string, namespace: string): BindingEntry {
  const ref = obj.roleRef ?? {};
  const subjects = (Array.isArray(obj.subjects) ? obj.subjects : []).filter((s: unknown) => s && typeof s === 'object');
  return {
    name,
    namespace,
    roleRef: { kind: String(ref.kind ?? ''), name: String(ref.name ?? ''), apiGroup: ref.apiGroup },
    subjects,
  };
}

/** upstream appliesToUser; a ServiceAccount subject without a namespace is in the binding's. */
export function appliesTo(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return !!ns && user.username === `${SA_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** upstream's binding describers: `RoleBinding "b/ns" of ClusterRole "view" to User "bob"` */
function describe(b: BindingEntry, s: Subject): string {
  const subject =
    s.kind === 'ServiceAccount'
      ? `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || b.namespace}`)}`
      : `${s.kind} ${JSON.stringify(s.name)}`;
  const name = b.namespace ? `${b.name}/${b.namespace}` : b.name;
  return `${b.namespace ? 'RoleBinding' : 'ClusterRoleBinding'} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${subject}`;
}
