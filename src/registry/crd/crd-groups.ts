/**
 * Which groups a CustomResourceDefinition may claim:
 * - never a group the server serves itself (its custom resources would share the built-in
 *   type's storage, feed the authorizer and win discovery; refused with 422);
 * - upstream's protected community groups (`k8s.io`, `kubernetes.io` and their subdomains; under
 *   the default naming `plat.io`, `platform.io`) only with the `api-approved.<product>.io`
 *   annotation: a URL, or a reason starting with "unapproved" (upstream validateAPIApproval).
 */
import type { StatusCause } from '../../api/status.js';
import { groupFor, makeIdentity, type Identity } from '../../api/identity.js';
import { RESOURCES } from '../generated/resources.js';
import { invalid, required } from '../strategies/field-errors.js';

const ENHANCEMENT = 'see https://github.com/kubernetes/enhancements/pull/1111';

const builtinGroups = new Map<string, Set<string>>();

/** The groups of every built-in resource in the identity's names (enabled or not). */
function builtins(identity: Identity): Set<string> {
  let set = builtinGroups.get(identity.domain);
  if (!set) builtinGroups.set(identity.domain, set = new Set(RESOURCES.map((r) => groupFor(identity, r.group))));
  return set;
}

type Approval = 'missing' | 'bypassed' | 'approved' | 'invalid';

/** upstream GetAPIApprovalState */
function approvalState(value: unknown): Approval {
  if (typeof value !== 'string' || value === '') return 'missing';
  if (value.startsWith('unapproved')) return 'bypassed';
  try {
    const u = new URL(value);
    if (u.host && u.protocol) return 'approved';
  } catch { /* not a URL */ }
  return 'invalid';
}

/**
 * Causes for the CRD's group, on create and update alike (unlike upstream, an update of a CRD
 * stored without approval is not exempt: none can be stored since this rule).
 */
export function crdGroupCauses(crd: { metadata?: { annotations?: Record<string, unknown> }; spec?: { group?: unknown } }, apiDomain: string | undefined): StatusCause[] {
  const identity = makeIdentity(apiDomain);
  const group = crd?.spec?.group;
  if (typeof group !== 'string' || group === '') return [];
  if (builtins(identity).has(group)) return [invalid('spec.group', group, 'may not be a group served by the API server itself')];
  const protectedDomains = [identity.domain, `${identity.product}.io`];
  if (!protectedDomains.some((d) => group === d || group.endsWith(`.${d}`))) return [];
  const key = `api-approved.${identity.product}.io`;
  const value = crd.metadata?.annotations?.[key];
  const state = approvalState(value);
  const field = `metadata.annotations[${key}]`;
  if (state === 'missing') return [required(field, `protected groups must have approval annotation ${JSON.stringify(key)}, ${ENHANCEMENT}`)];
  if (state === 'invalid') {
    return [invalid(field, value, `protected groups must have approval annotation ${JSON.stringify(key)} with either a URL or a reason starting with "unapproved", ${ENHANCEMENT}`)];
  }
  return [];
}
