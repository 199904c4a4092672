/**
 * RBAC escalation prevention (upstream pkg/registry/rbac/*\/policybased), enforced whatever the
 * authorization modes are: a Role or ClusterRole may be written only with rules the requester
 * already holds at that scope, unless they may `escalate` it; a binding only to a role whose
 * rules they hold, unless they may `bind` it. Members of `system:masters` skip the checks.
 */
import type { RoleBinding } from '../../api/kinds.js';
import { fieldAt, isRecord } from '../../api/object.js';
import { MASTERS_GROUP, type MaybeAsync, type UserInfo } from '../../api/user.js';
import { forbiddenError, resourceAttributes } from './attributes.js';
import { settle, type Authorizer } from './authorizer.js';
import type { RbacIndex } from './rbac-index.js';
import type { RbacAuthorizer } from './rbac.js';
import { aggregateMessage } from './rbac.js';
import { compactRules, compactString, goStrings, uncovered, type PolicyRule } from './rbac-rules.js';

/** What a checked write is about: the request's resource, namespace and name. */
export interface RbacWrite {
  user: UserInfo;
  /** roles, clusterroles, rolebindings or clusterrolebindings */
  resource: string;
  namespace: string;
  /** the name in the path ('' for a create) */
  pathName: string;
}

const ROLE_KINDS = new Set(['roles', 'clusterroles']);
const CHECKED = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** Metadata the server sets or the garbage collector may change: ignored when comparing an update with the stored object. */
const SERVER_METADATA = new Set([
  'ownerReferences',
  'finalizers',
  'selfLink',
  'managedFields',
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
]);

/** JSON with sorted keys, empty objects and arrays dropped (a PUT body omits what the stored object has empty). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const c = canonical((v as Record<string, unknown>)[k]);
    if (c === undefined || c === null || (typeof c === 'object' && Object.keys(c as object).length === 0)) continue;
    out[k] = c;
  }
  return out;
}

/** upstream IsOnlyMutatingGCFields: equal but for ownerReferences, finalizers and server-set metadata. */
export function onlyGCFieldsChanged(obj: object | undefined, old: object | undefined): boolean {
  const strip = (o: object | undefined) => {
    const { kind: _k, apiVersion: _a, metadata = {}, ...rest }: Record<string, unknown> = { ...o };
    return canonical({
      ...rest,
      // metadata: an object on every decoded or stored object (the store checks it)
      metadata: Object.fromEntries(Object.entries(metadata as object).filter(([k]) => !SERVER_METADATA.has(k))),
    });
  };
  return JSON.stringify(strip(obj)) === JSON.stringify(strip(old));
}

/** A binding's roleRef as written (validation comes later): each field is converted where read. */
type WrittenRoleRef = NonNullable<RoleBinding['roleRef']>;

/** obj.roleRef, or no fields when absent (or not an object: then it has none of the fields read). */
function roleRefOf(obj: unknown): WrittenRoleRef {
  const ref = fieldAt(obj, 'roleRef') ?? {};
  return isRecord(ref) ? ref : {};
}

/** A decoded or stored object as onlyGCFieldsChanged compares it (its own fields, spread). */
const asObject = (v: unknown): object | undefined => (v !== null && typeof v === 'object' ? v : undefined);

export class EscalationCheck {
  constructor(private readonly deps: { authorizer: Authorizer; rbac: RbacAuthorizer; index: RbacIndex }) {}

  /** Whether a request needs the check: a create, update or patch of an RBAC object by a non-master. */
  applies(group: string, resource: string, subresource: string, verb: string, user: UserInfo | undefined): boolean {
    return (
      group === this.deps.index.group &&
      !subresource &&
      CHECKED.has(resource) &&
      (verb === 'create' || verb === 'update' || verb === 'patch') &&
      !!user &&
      !user.groups.includes(MASTERS_GROUP)
    );
  }

  /**
   * Throws (or rejects with, when the chain has to ask a webhook) a 403 StatusError when `obj`
   * (the object as it would be stored) escalates. `old` is the stored object of an update: a
   * change of only the garbage collector's fields (ownerReferences, finalizers) is never
   * checked, and a ClusterRole losing its aggregationRule is checked as one using it (upstream).
   */
  check(w: RbacWrite, obj: unknown, old?: unknown): MaybeAsync<void> {
    const name = String(fieldAt(obj, 'metadata', 'name') ?? w.pathName);
    if (old && onlyGCFieldsChanged(asObject(obj), asObject(old))) return;
    if (ROLE_KINDS.has(w.resource)) {
      const escalate = this.deps.authorizer.authorize(
        resourceAttributes({
          user: w.user,
          verb: 'escalate',
          apiGroup: this.deps.index.group,
          resource: w.resource,
          namespace: w.namespace || undefined,
          name: w.pathName || undefined,
        }),
      );
      return settle(escalate, (d) => {
        if (d.decision !== 'allow')
          this.checkRole(w, name, obj, !!(fieldAt(obj, 'aggregationRule') || fieldAt(old, 'aggregationRule')));
      });
    }
    const ref = roleRefOf(obj);
    if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') return this.checkBinding(w, name, ref);
    const bind = this.deps.authorizer.authorize(
      resourceAttributes({
        user: w.user,
        verb: 'bind',
        apiGroup: String(ref.apiGroup ?? ''),
        resource: ref.kind === 'Role' ? 'roles' : 'clusterroles',
        namespace: w.namespace || undefined,
        name: String(ref.name ?? ''),
      }),
    );
    return settle(bind, (d) => {
      if (d.decision !== 'allow') this.checkBinding(w, name, ref);
    });
  }

  /** Without `escalate`: an aggregationRule (set, kept or removed) needs every permission, and every rule must be held already. */
  private checkRole(w: RbacWrite, name: string, obj: unknown, aggregation: boolean): void {
    const group = this.deps.index.group;
    // an aggregationRule can gather anything, so using one needs every permission
    if (w.resource === 'clusterroles' && aggregation && this.confirmNoEscalation(w.user, '', FULL_AUTHORITY)) {
      throw forbiddenError(w.resource, group, name, 'must have cluster-admin privileges to use the aggregationRule');
    }
    const listed = fieldAt(obj, 'rules');
    const rules: PolicyRule[] = Array.isArray(listed) ? listed : [];
    const why = this.confirmNoEscalation(w.user, w.namespace, rules);
    if (why) throw forbiddenError(w.resource, group, name, why);
  }

  /** Without `bind` on the role: every rule of the role must be held already. */
  private checkBinding(w: RbacWrite, name: string, ref: WrittenRoleRef): void {
    const group = this.deps.index.group;
    const rules = this.deps.index.roleRefRules(
      { kind: String(ref.kind ?? ''), name: String(ref.name ?? '') },
      w.namespace,
    );
    if (!Array.isArray(rules)) {
      // the registry getters' NotFound (plural resource), as upstream's binding storage reports it
      throw forbiddenError(
        w.resource,
        group,
        name,
        `${rules.missing.kind.toLowerCase()}s.${group} ${JSON.stringify(rules.missing.name)} not found`,
      );
    }
    const why = this.confirmNoEscalation(w.user, w.namespace, rules);
    if (why) throw forbiddenError(w.resource, group, name, why);
  }

  /** upstream ConfirmNoEscalation: '' when the user's RBAC rules in the namespace cover `rules`, else why not. */
  confirmNoEscalation(user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string {
    const own = this.deps.rbac.allRules(user, namespace);
    const missing = uncovered(own.rules, rules);
    if (missing.length === 0) return '';
    const lines = [...new Set(compactRules(missing).map(compactString))].sort();
    let msg = `user ${JSON.stringify(user.username)} (groups=${goStrings(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
    if (own.errors.length) msg += `; resolution errors: [${aggregateMessage(own.errors)}]`;
    return msg;
  }
}
