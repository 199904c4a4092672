/**
 * Which groups a CustomResourceDefinition may claim:
 * - never a group the server serves itself (its custom resources would share the built-in
 *   type's storage, feed the authorizer and win discovery; refused with 422);
 * - upstream's protected community groups need the api-approved annotation: api-approval.ts.
 */
import type { CustomResourceDefinition } from '../../api/kinds.js';
import type { StatusCause } from '../../api/status.js';
import { groupFor, makeIdentity, type Identity } from '../../api/identity.js';
import { RESOURCES } from '../generated/resources.js';
import { invalid } from '../strategies/field-errors.js';
import { approvalCauses } from './api-approval.js';

const builtinGroups = new Map<string, Set<string>>();

/** The groups of every built-in resource in the identity's names (enabled or not). */
function builtins(identity: Identity): Set<string> {
  let set = builtinGroups.get(identity.domain);
  if (!set) builtinGroups.set(identity.domain, (set = new Set(RESOURCES.map((r) => groupFor(identity, r.group)))));
  return set;
}

/** Causes for the CRD's group: a built-in group, else the approval policy of protected groups (old: on update). */
export function crdGroupCauses(
  crd: CustomResourceDefinition,
  apiDomain: string | undefined,
  old?: CustomResourceDefinition,
): StatusCause[] {
  const identity = makeIdentity(apiDomain);
  const group = crd?.spec?.group;
  if (typeof group !== 'string' || group === '') return [];
  if (builtins(identity).has(group))
    return [invalid('spec.group', group, 'may not be a group served by the API server itself')];
  return approvalCauses(crd, old, identity);
}
