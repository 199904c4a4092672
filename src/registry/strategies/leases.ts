/**
 * coordination.plat.io/v1 Leases (node heartbeats, leader election): PUT creates (upstream
 * AllowCreateOnUpdate), and upstream ValidateLeaseSpec: leaseDurationSeconds > 0,
 * leaseTransitions >= 0, preferredHolder only with a strategy.
 */
import type { Lease, LeaseSpec } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { forbidden, invalid, type Cause } from './field-errors.js';

export function validateLeaseSpec(spec: LeaseSpec | undefined): Cause[] {
  const out: Cause[] = [];
  const d = spec?.leaseDurationSeconds;
  if (typeof d === 'number' && d <= 0) out.push(invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
  const t = spec?.leaseTransitions;
  if (typeof t === 'number' && t < 0)
    out.push(invalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
  if (spec?.preferredHolder && !spec?.strategy)
    out.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  return out;
}

export const leaseStrategy: ResourceStrategy<Lease> = {
  ...DEFAULT_STRATEGY,
  allowCreateOnUpdate: true,
  validate: (obj) => validateLeaseSpec(obj.spec),
};
