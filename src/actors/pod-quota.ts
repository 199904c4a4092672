/**
 * What a ResourceQuota counts of a Pod (upstream pkg/quota/v1/evaluator/core's pod evaluator, as
 * src/admission/quota-usage.ts answers it), summed where the Pod is already parsed: in its actor,
 * once per write and once per load. The summary travels on the change event and the start-up
 * load (ChangeEvent.quota, CachedObject.quota), so the front thread's read cache keeps no JSON
 * of Pods and still answers quota usage without parsing anything (src/actors/read-cache.ts).
 */
import { fieldAt } from '../api/object.js';
import { quantityValue } from '../registry/strategies/quantity.js';
import type { CachedObject, PodQuota } from './protocol.js';
import type { Entry } from '../storage/cacher/type-cache.js';

/** The type key of the kind summarised (core/v1 Pods). */
export const PODS_KEY = '/pods';

/** Pod phases whose pods no longer count (upstream QuotaV1Pod). */
const FINISHED: ReadonlySet<unknown> = new Set(['Succeeded', 'Failed']);

/** A list field as written: [] when absent (validation has made it an array when present). */
export const listed = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A pod's containers as written ([] when it has none). */
export const containersOf = (pod: unknown): unknown[] => listed(fieldAt(pod, 'spec', 'containers'));

/**
 * Per resource name, the sum over the containers of their `resources.<key>[name]` (an
 * unparseable quantity adds 0, as an absent one); undefined when no container names one.
 */
function sums(pod: unknown, key: 'requests' | 'limits'): Record<string, number> | undefined {
  let out: Record<string, number> | undefined;
  for (const c of containersOf(pod)) {
    const r = fieldAt(c, 'resources', key);
    if (!r || typeof r !== 'object' || Array.isArray(r)) continue;
    for (const [name, q] of Object.entries(r)) {
      out ??= {};
      out[name] = (Object.hasOwn(out, name) ? out[name]! : 0) + (quantityValue(q) ?? 0);
    }
  }
  return out;
}

/**
 * A Pod's quota summary; undefined for the common Pod that counts one and names no request or
 * limit (the event and the read cache then carry nothing for it).
 */
export function podQuotaOf(pod: unknown): PodQuota | undefined {
  if (FINISHED.has(fieldAt(pod, 'status', 'phase'))) return { finished: true };
  const requests = sums(pod, 'requests');
  const limits = sums(pod, 'limits');
  if (!requests && !limits) return undefined;
  const out: PodQuota = {};
  if (requests) out.requests = requests;
  if (limits) out.limits = limits;
  return out;
}

/** The summary of one stored object: Pods only (`obj` is read only for them). */
export function quotaFor(typeKey: string, obj: () => unknown): PodQuota | undefined {
  return typeKey === PODS_KEY ? podQuotaOf(obj()) : undefined;
}

/** A Pod's total `resources.<key>[resource]` over its containers, from its summary. */
export function podSum(q: PodQuota | undefined, key: 'requests' | 'limits', resource: string): number {
  const r = q?.[key];
  return r && Object.hasOwn(r, resource) ? r[resource]! : 0;
}

/** A cached entry as the front thread's read cache and the controllers load it (no summary: see withQuota). */
export function cachedObject(typeKey: string, e: Entry, apiVersion = e.apiVersion): CachedObject {
  return { typeKey, namespace: e.namespace, name: e.name, apiVersion, json: e.json };
}

/**
 * The start-up load's object with its summary (the read cache loads it). A snapshot (a newly
 * elected leader's controllers, which read no summary) and CRD loads (never Pods) go without, so
 * a snapshot does not parse every Pod again.
 */
export function withQuota(o: CachedObject, obj: () => unknown): CachedObject {
  const quota = quotaFor(o.typeKey, obj);
  if (quota) o.quota = quota;
  return o;
}
