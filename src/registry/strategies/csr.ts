/**
 * certificates v1 CertificateSigningRequests: a signed PEM CERTIFICATE REQUEST, a signerName
 * of the form `domain/path` other than the legacy one, known usages without duplicates. The
 * requester (spec.username, uid, groups, extra) is recorded on create; the spec is fixed after
 * creation; status changes only through `approval` (Approved/Denied conditions) and `status`
 * (the certificate and other conditions), with the rules of csr-status.ts.
 */
import type { CertificateSigningRequest } from '../../api/kinds.js';
import { checkSignature, parseCSR, type CertificateRequest } from '../../x509/request.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { approvalWrite, conditionCauses, prepareStatusWrite, updateCauses } from './csr-status.js';
import { dnsSubdomain, duplicate, invalid, notSupported, required, type Cause } from './field-errors.js';

const USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** The request as base64 of PEM (the JSON form of spec.request); throws Go's message when bad. */
export function requestOf(request: unknown): CertificateRequest {
  return parseCSR(Buffer.from(typeof request === 'string' ? request : '', 'base64'));
}

/** validateCSR: parses, then checks the signature. */
function requestError(request: unknown): string | undefined {
  try {
    return checkSignature(requestOf(request));
  } catch (e) {
    return (e as Error).message;
  }
}

function validateSigner(name: unknown, product: string): Cause[] {
  if (!name) return [required('spec.signerName')];
  const s = String(name);
  if (s === `${product}.io/legacy-unknown`)
    return [invalid('spec.signerName', s, 'the legacy signerName is not allowed via this API version')];
  const parts = s.split('/');
  if (parts.length !== 2 || !parts[1])
    return [
      invalid('spec.signerName', s, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ];
  return dnsSubdomain('spec.signerName', parts[0]);
}

/** product: the identity's product word (`platform`, `kubernetes`) naming the built-in signers */
export function validateCSR(obj: CertificateSigningRequest, product = 'platform'): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  const err = requestError(spec.request);
  if (err) out.push(invalid('spec.request', spec.request ?? '', err));
  const usages: unknown[] = Array.isArray(spec.usages) ? spec.usages : [];
  if (usages.length === 0) out.push(required('spec.usages'));
  const seen = new Set<unknown>();
  usages.forEach((u, i) => {
    if (!USAGES.includes(u as string)) out.push(notSupported(`spec.usages[${i}]`, u, USAGES));
    else if (seen.has(u)) out.push(duplicate(`spec.usages[${i}]`, u));
    seen.add(u);
  });
  out.push(...validateSigner(spec.signerName, product));
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
    out.push(
      invalid(
        'spec.expirationSeconds',
        spec.expirationSeconds,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  }
  out.push(...conditionCauses(obj, undefined));
  return out;
}

/** The built-in signer names of an identity: `<product>.io/<signer>` (platform.io, kubernetes.io). */
export const signerName = (
  product: string,
  signer: 'kube-apiserver-client' | 'kube-apiserver-client-kubelet',
): string => `${product}.io/${signer}`;

/**
 * The CertificateSubjectRestriction admission plugin (validating, so after validation): the
 * API server client signer never issues for group system:masters.
 */
function subjectRestriction(obj: CertificateSigningRequest, product: string): string | undefined {
  const signer = signerName(product, 'kube-apiserver-client');
  if (obj.spec?.signerName !== signer) return undefined;
  let csr: CertificateRequest;
  try {
    csr = requestOf(obj.spec.request);
  } catch (e) {
    return `failed to parse CSR: ${(e as Error).message}`;
  }
  return csr.subject.organization.includes('system:masters')
    ? `use of ${signer} signer with system:masters group is not allowed`
    : undefined;
}

export const csrStrategy: ResourceStrategy<CertificateSigningRequest> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj, ctx) {
    obj.status = {};
    const spec = (obj.spec ??= {});
    for (const f of ['username', 'uid', 'groups', 'extra'] as const) delete spec[f];
    const u = ctx.user;
    if (!u) return;
    spec.username = u.username;
    if (u.uid) spec.uid = u.uid;
    if (u.groups.length) spec.groups = [...u.groups];
    if (u.extra && Object.keys(u.extra).length) spec.extra = structuredClone(u.extra);
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  },
  validate(obj, config) {
    return validateCSR(obj, config?.apiServiceName);
  },
  admitCreate(obj, ctx) {
    return subjectRestriction(obj, ctx.config.apiServiceName);
  },
  updateSubresource(name, obj, old, ctx) {
    return name === 'approval' ? approvalWrite(obj, old, ctx.now) : undefined;
  },
  prepareForStatusUpdate(next, old, ctx) {
    prepareStatusWrite(next, old, ctx.now);
  },
  validateSubresourceUpdate(name, next, old) {
    return name === 'status' || name === 'approval' ? updateCauses(next, old, name) : [];
  },
};
