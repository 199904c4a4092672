/**
 * What a ResourceQuota counts (upstream pkg/quota/v1/evaluator/core), over the front thread's
 * read cache: object counts (`count/<resource>[.<group>]` and the legacy `pods`, `services`,
 * `configmaps`, `secrets`, `persistentvolumeclaims`, `replicationcontrollers`,
 * `resourcequotas`, `services.nodeports`, `services.loadbalancers`), pod compute resources
 * (`requests.*`, `limits.*`, bare `cpu`/`memory` meaning requests; pods that Succeeded or
 * Failed do not count) and claim storage (`requests.storage`). Pods are counted from the quota
 * summaries their actors compute (actors/pod-quota.ts): the read cache holds no Pod JSON.
 */
import { typeKeyOf } from '../actors/routing.js';
import type { ReadCache } from '../actors/read-cache.js';
import { canonicalQuantity, quantityValue } from '../registry/strategies/quantity.js';
import { fieldAt } from '../api/object.js';
import { containersOf, listed, podQuotaOf, podSum, PODS_KEY } from '../actors/pod-quota.js';
import type { PodQuota } from '../actors/protocol.js';

const LEGACY: Record<string, string> = {
  pods: '/pods',
  services: '/services',
  configmaps: '/configmaps',
  secrets: '/secrets',
  persistentvolumeclaims: '/persistentvolumeclaims',
  replicationcontrollers: '/replicationcontrollers',
  resourcequotas: '/resourcequotas',
};

/** The type key an object-count resource name counts, or undefined. */
export function countedType(name: string): string | undefined {
  if (LEGACY[name]) return LEGACY[name];
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? typeKeyOf('', rest) : typeKeyOf(rest.slice(dot + 1), rest.slice(0, dot));
}

/**
 * The usage one object adds, for the given quota resource names. `obj` is a pod, service or
 * claim as written or stored, read field by field (an absent field counts nothing). A pod is
 * counted through its summary (podQuotaOf), as the Pods in the read cache are (podUsage).
 */
export function usageOf(typeKey: string, obj: unknown, names: readonly string[]): Record<string, number> {
  if (typeKey === PODS_KEY) return podUsage(podQuotaOf(obj), names);
  const out: Record<string, number> = {};
  const type = fieldAt(obj, 'spec', 'type');
  for (const n of names) {
    if (countedType(n) === typeKey) out[n] = 1;
    else if (typeKey === '/services' && n === 'services.nodeports')
      out[n] = type === 'NodePort' || type === 'LoadBalancer' ? listed(fieldAt(obj, 'spec', 'ports')).length : 0;
    else if (typeKey === '/services' && n === 'services.loadbalancers') out[n] = type === 'LoadBalancer' ? 1 : 0;
    else if (typeKey === '/persistentvolumeclaims' && n === 'requests.storage')
      out[n] = quantityValue(fieldAt(obj, 'spec', 'resources', 'requests', 'storage')) ?? 0;
  }
  return out;
}

/**
 * The usage one pod adds, from its quota summary (undefined: counts one, names no request or
 * limit): nothing once Succeeded or Failed; `requests.*`, `limits.*` and bare `cpu`, `memory`,
 * `ephemeral-storage` (requests) summed over its containers.
 */
export function podUsage(q: PodQuota | undefined, names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  if (q?.finished) return out;
  for (const n of names) {
    if (countedType(n) === PODS_KEY) out[n] = 1;
    else {
      const m =
        /^(requests|limits)\.(.+)$/.exec(n) ??
        (n === 'cpu' || n === 'memory' || n === 'ephemeral-storage' ? [n, 'requests', n] : null);
      if (m) out[n] = podSum(q, m[1] as 'requests' | 'limits', m[2]!);
    }
  }
  return out;
}

/** Containers lacking a request or limit a quota tracks (upstream: must specify ...). */
export function missingCompute(pod: unknown, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    const m = /^(requests|limits)\.(cpu|memory)$/.exec(n);
    if (!m) continue;
    if (containersOf(pod).some((c) => fieldAt(c, 'resources', m[1]!, m[2]!) === undefined)) out.push(n);
  }
  return out.sort();
}

/** Current usage of a namespace for the quota's resource names. */
export function namespaceUsage(
  readCache: ReadCache,
  namespace: string,
  names: readonly string[],
): Record<string, number> {
  const used: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const types = new Set<string>();
  for (const n of names) {
    const t = countedType(n);
    if (t) types.add(t);
    else if (n.startsWith('services.')) types.add('/services');
    else if (n === 'requests.storage') types.add('/persistentvolumeclaims');
    else types.add('/pods');
  }
  const add = (usage: Record<string, number>) => {
    for (const [k, v] of Object.entries(usage)) used[k] = (used[k] ?? 0) + v;
  };
  for (const t of types) {
    // Pods: their summaries (the read cache holds no Pod JSON); other kinds: their JSON
    if (t === PODS_KEY) for (const q of readCache.podQuotas(namespace)) add(podUsage(q, names));
    else for (const json of readCache.inNamespace(t, namespace)) add(usageOf(t, JSON.parse(json), names));
  }
  return used;
}

const BIN = [
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
] as const;

/**
 * A summed quantity as upstream prints it: integers (with a binary suffix when one divides
 * them, as sums of BinarySI values print) or millis, in canonical form ("1000" is "1k"), so
 * the written status equals what decoding would store and syncs compare equal.
 */
export function formatQuantity(v: number): string {
  const written = Number.isInteger(v) ? integerQuantity(v) : `${Math.round(v * 1000)}m`;
  const c = canonicalQuantity(written);
  return 'value' in c ? c.value : written;
}

function integerQuantity(v: number): string {
  for (const [s, f] of BIN) if (v >= f && v % f === 0) return `${v / f}${s}`;
  return String(v);
}
