/**
 * The API approval policy for CRDs in protected groups (upstream apihelpers
 * GetAPIApprovalState, KEP 1111): a group under the API domain or the product's own
 * (`k8s.io`, `kubernetes.io`; `plat.io`, `platform.io`) needs the `api-approved.<product>.io`
 * annotation holding a URL (approved) or a reason starting with "unapproved" (bypassed).
 * Checked at CRD write, and reported as the KubernetesAPIApprovalPolicyConformant condition.
 */
import type { CustomResourceDefinition } from '../../api/kinds.js';
import type { StatusCause } from '../../api/status.js';
import { invalid, required } from '../strategies/field-errors.js';

export type ApprovalState = 'Approved' | 'Bypassed' | 'Missing' | 'Invalid';

const PRODUCTS: Record<string, string> = { 'k8s.io': 'kubernetes.io', 'plat.io': 'platform.io' };

/** The API domain of a CRD from its apiVersion (`apiextensions.k8s.io/v1` → `k8s.io`). */
function domainOf(apiVersion: unknown): string {
  const group = String(apiVersion ?? '').split('/')[0] ?? '';
  return group.startsWith('apiextensions.') ? group.slice('apiextensions.'.length) : 'plat.io';
}

/**
 * The annotation a CRD in a protected group needs, or undefined when its group is not protected;
 * the served identity's domain when known, else the one of the CRD's apiVersion.
 */
export function approvalAnnotation(
  crd: CustomResourceDefinition | undefined,
  identity?: { domain: string },
): string | undefined {
  const domain = identity?.domain ?? domainOf(crd?.apiVersion);
  const product = PRODUCTS[domain] ?? domain;
  const group = String(crd?.spec?.group ?? '');
  const under = (d: string) => group === d || group.endsWith(`.${d}`);
  return under(domain) || under(product) ? `api-approved.${product}` : undefined;
}

/** The approval state of the annotation's value, with upstream's message for it. */
export function approvalState(
  annotation: string,
  value: string | undefined,
): { state: ApprovalState; message: string } {
  const see = 'see https://github.com/kubernetes/enhancements/pull/1111';
  if (!value)
    return {
      state: 'Missing',
      message: `protected groups must have approval annotation ${JSON.stringify(annotation)}, ${see}`,
    };
  if (value.startsWith('unapproved')) return { state: 'Bypassed', message: `not approved: ${JSON.stringify(value)}` };
  try {
    const u = new URL(value);
    if (u.host && u.protocol) return { state: 'Approved', message: `approved in ${value}` };
  } catch {
    /* not a URL */
  }
  return {
    state: 'Invalid',
    message: `protected groups must have approval annotation ${JSON.stringify(annotation)} with either a URL or a reason starting with "unapproved", ${see}`,
  };
}

/** Causes for a CRD write: a protected group without a usable annotation (unchanged on update: allowed). */
export function approvalCauses(
  crd: CustomResourceDefinition,
  old?: CustomResourceDefinition,
  identity?: { domain: string },
): StatusCause[] {
  const annotation = approvalAnnotation(crd, identity);
  if (!annotation) return [];
  const value = crd?.metadata?.annotations?.[annotation];
  if (old && old.metadata?.annotations?.[annotation] === value) return [];
  const { state, message } = approvalState(annotation, value);
  const field = `metadata.annotations[${annotation}]`;
  if (state === 'Missing') return [required(field, message)];
  if (state === 'Invalid') return [invalid(field, value, message)];
  return [];
}

/** The KubernetesAPIApprovalPolicyConformant condition of a CRD, or undefined for unprotected groups. */
export function approvalCondition(
  crd: CustomResourceDefinition,
): { status: string; reason: string; message: string } | undefined {
  const annotation = approvalAnnotation(crd);
  if (!annotation) return undefined;
  const { state, message } = approvalState(annotation, crd?.metadata?.annotations?.[annotation]);
  const reason = {
    Approved: 'ApprovedAnnotation',
    Bypassed: 'UnapprovedAnnotation',
    Missing: 'MissingAnnotation',
    Invalid: 'InvalidAnnotation',
  }[state];
  return { status: state === 'Approved' ? 'True' : 'False', reason, message };
}
