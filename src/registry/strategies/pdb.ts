/** policy v1 PodDisruptionBudgets: minAvailable or maxUnavailable (not both), each an int or a percent. */
import type { PodDisruptionBudget } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { invalid, notSupported, type Cause } from './field-errors.js';
import { validateLabelSelector } from './label-selector.js';

const PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

function intOrPercent(v: unknown, path: string): Cause[] {
  if (typeof v === 'number')
    return Number.isInteger(v) && v >= 0 ? [] : [invalid(path, v, 'must be greater than or equal to 0')];
  if (typeof v !== 'string' || !/^[0-9]+%$/.test(v)) return [invalid(path, v, PERCENT_MESSAGE)];
  return Number.parseInt(v, 10) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
}

export function validatePDB(obj: PodDisruptionBudget): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  const has = (f: 'minAvailable' | 'maxUnavailable') => spec[f] !== undefined && spec[f] !== null;
  if (has('minAvailable') && has('maxUnavailable'))
    out.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  if (has('minAvailable')) out.push(...intOrPercent(spec.minAvailable, 'spec.minAvailable'));
  if (has('maxUnavailable')) out.push(...intOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    out.push(notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
  }
  return out;
}

export const pdbStrategy: ResourceStrategy<PodDisruptionBudget> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
  validate: validatePDB,
};
