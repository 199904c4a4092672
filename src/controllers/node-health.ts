/**
 * What upstream's node lifecycle controller decides for one Node, as pure functions of the
 * Node object and the clock (src/controllers/node-lifecycle-controller.ts applies them):
 * - a Node whose heartbeat is overdue gets every standard condition set to Unknown
 *   (tryUpdateNodeHealth: NodeStatusUnknown "Kubelet stopped posting node status.", or
 *   NodeStatusNeverUpdated "Kubelet never posted node status." for a missing condition);
 * - the NoSchedule taints follow the conditions and spec.unschedulable
 *   (doNoScheduleTaintingPass), the NoExecute taints follow Ready (Unknown: unreachable,
 *   False: not-ready; taint-based eviction's marks, with timeAdded).
 * Taint keys are upstream's with the product word: `node.<product>.io/unreachable`.
 */

import type { Node, Taint } from '../api/kinds.js';
import { conditionsOf, type Condition } from '../api/object.js';

/** conditions the controller sets to Unknown, in upstream's order */
const CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

export const NODE_STATUS_UNKNOWN = { reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' };
export const NODE_STATUS_NEVER_UPDATED = {
  reason: 'NodeStatusNeverUpdated',
  message: 'Kubelet never posted node status.',
};

export type { Taint } from '../api/kinds.js';

export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function readyCondition(node: Node | undefined): Condition | undefined {
  return conditionsOf(node).find((c) => c?.type === 'Ready');
}

/** Whether any standard condition still needs to become Unknown. */
export function needsUnknown(node: Node | undefined): boolean {
  const conds = conditionsOf(node);
  return CONDITIONS.some((t) => conds.find((c) => c?.type === t)?.status !== 'Unknown');
}

/** The status with every standard condition Unknown (the heartbeat time of a present one kept). */
export function unknownStatus(node: Node, now: number): NonNullable<Node['status']> {
  const status = structuredClone(node.status ?? {});
  const conds: Condition[] = Array.isArray(status.conditions) ? status.conditions : [];
  const at = rfc3339(now);
  for (const type of CONDITIONS) {
    const c = conds.find((x) => x?.type === type);
    if (!c) {
      conds.push({
        type,
        status: 'Unknown',
        lastHeartbeatTime: node.metadata?.creationTimestamp,
        lastTransitionTime: at,
        ...NODE_STATUS_NEVER_UPDATED,
      });
    } else if (c.status !== 'Unknown') {
      Object.assign(c, { status: 'Unknown', lastTransitionTime: at, ...NODE_STATUS_UNKNOWN });
    }
  }
  status.conditions = conds;
  return status;
}

/** The taint keys of one product: condition type -> status -> key. */
function conditionTaints(product: string): Record<string, Record<string, string>> {
  const k = (s: string) => `node.${product}.io/${s}`;
  return {
    Ready: { False: k('not-ready'), Unknown: k('unreachable') },
    MemoryPressure: { True: k('memory-pressure') },
    DiskPressure: { True: k('disk-pressure') },
    NetworkUnavailable: { True: k('network-unavailable') },
    PIDPressure: { True: k('pid-pressure') },
  };
}

/** The taints the controller owns (key + effect) that node should carry now. */
export function wantedTaints(node: Node | undefined, product: string): Taint[] {
  const map = conditionTaints(product);
  const out: Taint[] = [];
  for (const c of conditionsOf(node)) {
    const key = c ? map[c.type]?.[c.status] : undefined;
    if (key) out.push({ key, effect: 'NoSchedule' });
  }
  if (node?.spec?.unschedulable === true) out.push({ key: `node.${product}.io/unschedulable`, effect: 'NoSchedule' });
  const ready = readyCondition(node)?.status;
  if (ready === 'False' || ready === 'Unknown') out.push({ key: map.Ready![ready]!, effect: 'NoExecute' });
  return out;
}

/**
 * spec.taints after the controller's pass: its own taints that no longer apply go, wanted ones
 * missing are appended (NoExecute ones with timeAdded), every other taint stays as it is.
 * undefined when nothing changes.
 */
export function nextTaints(node: Node | undefined, product: string, now: number): Taint[] | undefined {
  const map = conditionTaints(product);
  const owned = new Set([...Object.values(map).flatMap((m) => Object.values(m)), `node.${product}.io/unschedulable`]);
  const id = (t: Taint) => `${t.key}:${t.effect}`;
  const wanted = wantedTaints(node, product);
  const wantedIds = new Set(wanted.map(id));
  const current: Taint[] = Array.isArray(node?.spec?.taints) ? node.spec.taints : [];
  const ours = (t: Taint) => owned.has(t.key) && (t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  const kept = current.filter((t) => !ours(t) || wantedIds.has(id(t)));
  const have = new Set(kept.map(id));
  const added = wanted
    .filter((t) => !have.has(id(t)))
    .map((t) => (t.effect === 'NoExecute' ? { ...t, timeAdded: rfc3339(now) } : t));
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}
