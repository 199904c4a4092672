/**
 * At every start (upstream's RBAC post-start hook): creates each default ClusterRole and
 * ClusterRoleBinding that is missing, and reconciles the existing ones unless annotated
 * autoupdate "false": missing labels, annotations, permissions (rules the stored role does not
 * cover), aggregation selectors and subjects are added; nothing is removed. A binding whose
 * roleRef differs is recreated, as upstream.
 */
import { bodyText } from '../../actors/pack.js';
import type { Result } from '../../actors/protocol.js';
import type { Identity } from '../../api/identity.js';
import { groupFor } from '../../api/identity.js';
import type { ActorPool, OpInput } from '../../actors/pool.js';
import { defaultPolicy, policyKeys, type DefaultBinding, type DefaultRole } from './bootstrap-policy.js';
import { uncovered } from './rbac-rules.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

type Submit = (op: OpInput) => Promise<Result>;

export async function ensureDefaultPolicy(pool: Pick<ActorPool, 'submit'>, identity: Identity): Promise<void> {
  const { clusterRoles, clusterRoleBindings, roles, roleBindings } = defaultPolicy(identity);
  const group = groupFor(identity, 'rbac.authorization.plat.io');
  const autoupdate = policyKeys(identity).autoupdate;
  const submit: Submit = (op) => pool.submit(op);
  await Promise.all([
    ...clusterRoles.map((r) =>
      ensure(submit, { group, version: 'v1', resource: 'clusterroles' }, r, autoupdate, reconcileRole),
    ),
    ...clusterRoleBindings.map((b) =>
      ensure(submit, { group, version: 'v1', resource: 'clusterrolebindings' }, b, autoupdate, reconcileBinding),
    ),
    ...roles.map((r) => ensure(submit, { group, version: 'v1', resource: 'roles' }, r, autoupdate, reconcileRole)),
    ...roleBindings.map((b) =>
      ensure(submit, { group, version: 'v1', resource: 'rolebindings' }, b, autoupdate, reconcileBinding),
    ),
  ]);
}

/** A stored Role, ClusterRole or (Cluster)RoleBinding as reconciling reads and extends it. */
interface StoredRbac {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  rules?: unknown;
  aggregationRule?: { clusterRoleSelectors?: unknown[] };
  roleRef?: { kind?: unknown; name?: unknown; apiGroup?: unknown };
  subjects?: { kind?: unknown; name?: unknown; namespace?: unknown }[];
}

type Reconcile<T> = (existing: StoredRbac, expected: T) => 'same' | 'changed' | 'recreate';

async function ensure<T extends DefaultRole | DefaultBinding>(
  submit: Submit,
  type: { group: string; version: string; resource: string },
  expected: T,
  autoupdate: string,
  reconcile: Reconcile<T>,
): Promise<void> {
  const namespace = expected.metadata.namespace ?? '';
  const what = `${type.resource} ${namespace ? `${namespace}/` : ''}${expected.metadata.name}`;
  const name = expected.metadata.name;
  const create = async () => {
    const r = await submit({
      op: 'create',
      type,
      enc: JSON_ENC,
      dryRun: false,
      namespace,
      body: { text: JSON.stringify(expected), contentType: 'json' },
    });
    if ('error' in r && r.error.code !== 409) throw new Error(`bootstrap ${what}: ${r.error.message}`);
  };
  const got = await submit({ op: 'get', type, enc: JSON_ENC, namespace, name });
  if ('error' in got) {
    if (got.error.code === 404) return create();
    throw new Error(`bootstrap ${what}: ${got.error.message}`);
  }
  if (!('code' in got)) return;
  const existing = JSON.parse(bodyText(got.body));
  if (existing.metadata?.annotations?.[autoupdate] === 'false') return;
  const outcome = reconcile(existing, expected);
  if (outcome === 'same') return;
  if (outcome === 'recreate') {
    await submit({ op: 'delete', type, enc: JSON_ENC, dryRun: false, namespace, name, options: {} });
    return create();
  }
  const r = await submit({
    op: 'update',
    type,
    enc: JSON_ENC,
    dryRun: false,
    namespace,
    name,
    body: { text: JSON.stringify(existing), contentType: 'json' },
  });
  // a concurrent writer won: the next start reconciles again
  if ('error' in r && r.error.code !== 409) throw new Error(`bootstrap ${what}: ${r.error.message}`);
}

/** Adds missing metadata entries to `existing`; true when something was added. */
function mergeMetadata(existing: StoredRbac, expected: DefaultRole['metadata']): boolean {
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    const have = (existing.metadata[field] ??= {});
    for (const [k, v] of Object.entries(expected[field]))
      if (!(k in have)) {
        have[k] = v;
        changed = true;
      }
  }
  return changed;
}

export function reconcileRole(existing: StoredRbac, expected: DefaultRole): 'same' | 'changed' {
  let changed = mergeMetadata(existing, expected.metadata);
  if (expected.aggregationRule) {
    const sel = ((existing.aggregationRule ??= {}).clusterRoleSelectors ??= []) as unknown[];
    for (const s of expected.aggregationRule.clusterRoleSelectors) {
      if (!sel.some((x) => JSON.stringify(x) === JSON.stringify(s))) {
        sel.push(s);
        changed = true;
      }
    }
  } else {
    const rules = Array.isArray(existing.rules) ? existing.rules : [];
    const missing = uncovered(rules, expected.rules);
    if (missing.length) {
      existing.rules = [...rules, ...missing];
      changed = true;
    }
  }
  return changed ? 'changed' : 'same';
}

export function reconcileBinding(existing: StoredRbac, expected: DefaultBinding): 'same' | 'changed' | 'recreate' {
  const ref = existing.roleRef ?? {};
  if (
    ref.kind !== expected.roleRef.kind ||
    ref.name !== expected.roleRef.name ||
    ref.apiGroup !== expected.roleRef.apiGroup
  )
    return 'recreate';
  let changed = mergeMetadata(existing, expected.metadata);
  const subjects = (existing.subjects ??= []);
  for (const s of expected.subjects) {
    const ns = 'namespace' in s ? s.namespace : '';
    if (!subjects.some((x) => x.kind === s.kind && x.name === s.name && (x.namespace ?? '') === ns)) {
      subjects.push(s);
      changed = true;
    }
  }
  return changed ? 'changed' : 'same';
}
