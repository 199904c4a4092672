/**
 * PodDisruptionBudget status as upstream's disruption controller computes it (pure functions):
 * shared by the controller (src/controllers/disruption-controller.ts) and the eviction handler,
 * which records the condition it changes.
 */
import type { Pod, PdbStatus, PodDisruptionBudget } from '../api/kinds.js';
import type { Condition } from '../api/object.js';
import { labelSelectorFromObject } from '../api/selectors.js';

/** upstream DeletionTimeout: how long an eviction may wait for its pod to start deleting */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

export interface PodRec {
  name: string;
  labels: Record<string, string> | undefined;
  healthy: boolean;
  deleting: boolean;
}

/** Running, Ready=True and not deleting (upstream countHealthyPods plus the Running phase). */
export function podHealthy(pod: Pod): boolean {
  if (pod.metadata?.deletionTimestamp || pod.status?.phase !== 'Running') return false;
  return (pod.status?.conditions ?? []).some((c) => c?.type === 'Ready' && c.status === 'True');
}

function scaled(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  return Math.ceil((Number.parseInt(v, 10) * total) / 100);
}

/** The status upstream's controller would write for pdb given the pods of its namespace. */
export function computeStatus(
  pdb: PodDisruptionBudget,
  pods: Iterable<PodRec>,
  now: number,
): { status: PdbStatus; recheckAt?: number } {
  const sel = labelSelectorFromObject(pdb.spec?.selector);
  const matched = [...pods].filter((p) => !sel.matchesNothing && sel.matches(p.labels));
  const byName = new Map(matched.map((p) => [p.name, p]));
  const expectedPods = matched.length;
  const old: PdbStatus = pdb.status ?? {};
  const disruptedPods: Record<string, string> = {};
  let recheckAt: number | undefined;
  for (const [name, ts] of Object.entries(old.disruptedPods ?? {})) {
    const p = byName.get(name);
    const expires = Date.parse(ts) + DISRUPTED_POD_TIMEOUT_MS;
    if (!p || p.deleting || !(expires > now)) continue;
    disruptedPods[name] = ts;
    recheckAt = Math.min(recheckAt ?? expires, expires);
  }
  const currentHealthy = matched.filter((p) => p.healthy && !p.deleting && !(p.name in disruptedPods)).length;
  const spec = pdb.spec ?? {};
  let desiredHealthy = 0;
  if (spec.minAvailable !== undefined && spec.minAvailable !== null)
    desiredHealthy = scaled(spec.minAvailable, expectedPods);
  else if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null)
    desiredHealthy = Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods));
  const disruptionsAllowed = Math.max(0, currentHealthy - desiredHealthy);
  const status: PdbStatus = { observedGeneration: pdb.metadata?.generation ?? 0 };
  if (Object.keys(disruptedPods).length) status.disruptedPods = disruptedPods;
  Object.assign(status, { disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods });
  status.conditions = disruptionCondition(old.conditions, disruptionsAllowed, now);
  return { status, recheckAt };
}

/** upstream UpdateDisruptionAllowedCondition (meta.SetStatusCondition keeps the transition time). */
export function disruptionCondition(conditions: Condition[] | undefined, allowed: number, now: number): Condition[] {
  const want =
    allowed > 0 ? { status: 'True', reason: 'SufficientPods' } : { status: 'False', reason: 'InsufficientPods' };
  const out = (conditions ?? []).filter((c) => c?.type !== 'DisruptionAllowed');
  const prev = (conditions ?? []).find((c) => c?.type === 'DisruptionAllowed');
  const lastTransitionTime =
    prev && prev.status === want.status
      ? prev.lastTransitionTime
      : new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  out.push({
    type: 'DisruptionAllowed',
    status: want.status,
    ...(prev?.observedGeneration ? { observedGeneration: prev.observedGeneration } : {}),
    lastTransitionTime,
    reason: want.reason,
    message: prev?.status === want.status && prev?.reason === want.reason ? (prev.message ?? '') : '',
  });
  return out;
}

/** Order-insensitive structural equality of two JSON values. */
export function same(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, x]) => [k, canon(x)]),
          )
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}
