/**
 * The product identity: every name that carries the API domain lives here, so the whole
 * identity is one setting (`--api-domain`). The reference schema is written with `plat.io`.
 */
export const REFERENCE_DOMAIN = 'plat.io';

export interface Identity {
  /** api domain used in group names, e.g. "plat.io" (or an upstream domain) */
  domain: string;
  /** the product word used in media types and the spec finalizer, e.g. "platform" */
  product: string;
  systemNamespace: string;
  publicNamespace: string;
  nodeLeaseNamespace: string;
  protobufMediaType: string;
}

/** Known domains and their product words; any other domain uses its first label for both. */
const PRODUCTS: Record<string, { product: string; short: string }> = {
  [REFERENCE_DOMAIN]: { product: 'platform', short: 'plat' },
  'k8s.io': { product: 'kubernetes', short: 'kube' },
};

export function makeIdentity(domain = REFERENCE_DOMAIN): Identity {
  const first = domain.split('.')[0]!;
  const { product, short } = PRODUCTS[domain] ?? { product: first, short: first };
  return {
    domain,
    product,
    systemNamespace: `${short}-system`,
    publicNamespace: `${short}-public`,
    nodeLeaseNamespace: `${short}-node-lease`,
    protobufMediaType: `application/vnd.${product}.protobuf`,
  };
}

/** The namespaces that always exist and may not be deleted (upstream NamespaceLifecycle's immortal ones). */
export function protectedNamespaces(identity: Identity): string[] {
  return ['default', identity.systemNamespace, identity.publicNamespace, identity.nodeLeaseNamespace];
}

/** Rewrites a group name written in the reference domain to the configured domain. */
export function groupFor(identity: Identity, referenceGroup: string): string {
  if (identity.domain === REFERENCE_DOMAIN) return referenceGroup;
  return referenceGroup.endsWith(REFERENCE_DOMAIN)
    ? referenceGroup.slice(0, -REFERENCE_DOMAIN.length) + identity.domain
    : referenceGroup;
}

/** The reference-domain name of a served group (the inverse of groupFor), e.g. for the strategy table. */
export function referenceGroup(identity: Identity, servedGroup: string): string {
  if (identity.domain === REFERENCE_DOMAIN || !servedGroup.endsWith(identity.domain)) return servedGroup;
  return servedGroup.slice(0, -identity.domain.length) + REFERENCE_DOMAIN;
}
