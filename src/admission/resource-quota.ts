/**
 * The ResourceQuota admission plugin (validating; upstream plugin/pkg/admission/resourcequota):
 * a create in a namespace with ResourceQuotas is refused (403) when it would take a tracked
 * resource past `spec.hard` (`exceeded quota: q, requested: pods=1, used: pods=2, limited:
 * pods=2`), or when a pod lacks a request/limit a quota tracks (`failed quota: q: must specify
 * limits.cpu`). Usage is computed from the read cache at admission time (quota-usage.ts);
 * upstream serialises admissions through the quota's status, here two concurrent creates may
 * both pass. Only creates are checked (pod resources are immutable).
 */
import { errors } from '../api/status.js';
import { isObjectBody } from '../api/object.js';
import { typeKeyOf } from '../actors/routing.js';
import type { ReadCache } from '../actors/read-cache.js';
import type { AdmissionAttributes, AdmissionPlugin, RequestAttributes } from './attributes.js';
import { formatQuantity, missingCompute, namespaceUsage, usageOf } from './quota-usage.js';
import { quantityValue } from '../registry/strategies/quantity.js';

const pretty = (r: Record<string, number>) =>
  Object.keys(r)
    .sort()
    .map((k) => `${k}=${formatQuantity(r[k]!)}`)
    .join(',');

export class ResourceQuotaPlugin implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  constructor(private readonly readCache: ReadCache) {}

  handles(a: RequestAttributes): boolean {
    return a.operation === 'CREATE' && !a.subresource && a.namespaced && this.readCache.count('/resourcequotas') > 0;
  }

  validate(a: AdmissionAttributes): void {
    const obj = a.object;
    // the dry-run result of the create: an object (stored shape) when there is one
    if (!isObjectBody(obj)) return;
    const typeKey = typeKeyOf(a.group, a.resource);
    const name = obj.metadata?.name || obj.metadata?.generateName || 'Unknown';
    const refuse = (why: string) => {
      throw errors.forbidden(
        `${a.resource}${a.group ? '.' + a.group : ''} ${JSON.stringify(name)} is forbidden: ${why}`,
        { group: a.group, kind: a.resource, name },
      );
    };
    for (const json of this.readCache.inNamespace('/resourcequotas', a.namespace)) {
      const quota = JSON.parse(json);
      const hard: Record<string, unknown> = quota.spec?.hard ?? {};
      const names = Object.keys(hard);
      const requested = Object.fromEntries(Object.entries(usageOf(typeKey, obj, names)).filter(([, v]) => v > 0));
      if (typeKey === '/pods') {
        const missing = missingCompute(obj, names);
        if (missing.length) refuse(`failed quota: ${quota.metadata.name}: must specify ${missing.join(',')}`);
      }
      if (!Object.keys(requested).length) continue;
      const used = namespaceUsage(this.readCache, a.namespace, Object.keys(requested));
      const failed = Object.keys(requested).filter(
        (k) => used[k]! + requested[k]! > Number(quantityOf(hard[k])) + 1e-9,
      );
      if (!failed.length) continue;
      const pick = (r: Record<string, number>) => Object.fromEntries(failed.map((k) => [k, r[k]!]));
      const limited = Object.fromEntries(failed.map((k) => [k, quantityOf(hard[k])]));
      refuse(
        `exceeded quota: ${quota.metadata.name}, requested: ${pretty(pick(requested))}, used: ${pretty(pick(used))}, limited: ${pretty(limited)}`,
      );
    }
  }
}

function quantityOf(v: unknown): number {
  return quantityValue(v) ?? 0;
}
