/**
 * The built-in signers' restrictions (upstream pkg/controller/certificates/signer and
 * pkg/apis/certificates helpers), for the identity's product word (`platform.io/...`):
 * - `<product>.io/kube-apiserver-client`: usages only digital signature, key encipherment and
 *   (required) client auth;
 * - `<product>.io/kube-apiserver-client-kubelet`: subject O exactly system:nodes, CN
 *   `system:node:<name>`, no subject alternative names, usages exactly {digital signature,
 *   (key encipherment,) client auth}.
 * Every issued certificate is a leaf (CA:FALSE) whatever the request asks for.
 */
import type { CertificateRequest } from '../x509/request.js';

export type SignerCheck = (csr: CertificateRequest, usages: readonly string[]) => string | undefined;

function apiServerClientUsages(_csr: CertificateRequest, usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

const KUBELET_USAGES = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_USAGES_NO_RSA = ['client auth', 'digital signature'];

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const s = new Set(a);
  return s.size === b.length && b.every((x) => s.has(x));
};

/** upstream ValidateKubeletClientCSR */
function kubeletClient(csr: CertificateRequest, usages: readonly string[]): string | undefined {
  const o = csr.subject.organization;
  if (o.length !== 1 || o[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (csr.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (csr.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (csr.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (csr.uris.length) return 'URI subjectAltNames are not allowed';
  if (!csr.subject.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_USAGES) && !sameSet(usages, KUBELET_USAGES_NO_RSA))
    return `usages did not match [${KUBELET_USAGES.join(' ')}]`;
  return undefined;
}

/** signerName -> its restriction check, for the identity's product word. */
export function builtInSigners(product: string): Map<string, SignerCheck> {
  return new Map<string, SignerCheck>([
    [`${product}.io/kube-apiserver-client`, apiServerClientUsages],
    [`${product}.io/kube-apiserver-client-kubelet`, kubeletClient],
  ]);
}

const MIN_DURATION_MS = 10 * 60_000;

/** upstream signer.duration: the requested lifetime, at least 10 minutes, at most the configured one. */
export function certificateTtlMs(expirationSeconds: unknown, maxMs: number): number {
  if (typeof expirationSeconds !== 'number') return maxMs;
  const requested = expirationSeconds * 1000;
  if (requested > maxMs) return maxMs;
  return Math.max(requested, MIN_DURATION_MS);
}
