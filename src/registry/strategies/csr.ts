/**
 * certificates v1 CertificateSigningRequests: a PEM CERTIFICATE REQUEST, a signerName of the
 * form `domain/path` other than the legacy one, known usages without duplicates; the spec is
 * fixed after creation (upstream PrepareForUpdate keeps it).
 */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { dnsSubdomain, duplicate, invalid, notSupported, required, type Cause } from './field-errors.js';

export const LEGACY_SIGNER = 'platform.io/legacy-unknown';

const USAGES = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment',
  'decipher only', 'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel',
  'ipsec user', 'key agreement', 'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime',
  'server auth', 'signing', 'timestamping',
];

function requestError(request: unknown): string | undefined {
  const pem = typeof request === 'string' ? Buffer.from(request, 'base64').toString('latin1') : '';
  const m = /-----BEGIN ([A-Z ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+-----END \1-----/.exec(pem);
  return m && m[1] === 'CERTIFICATE REQUEST' ? undefined : 'PEM block type must be CERTIFICATE REQUEST';
}

function validateSigner(name: unknown): Cause[] {
  if (!name) return [required('spec.signerName')];
  const s = String(name);
  if (s === LEGACY_SIGNER) return [invalid('spec.signerName', s, 'the legacy signerName is not allowed via this API version')];
  const parts = s.split('/');
  if (parts.length !== 2 || !parts[1]) return [invalid('spec.signerName', s, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  return dnsSubdomain('spec.signerName', parts[0]);
}

export function validateCSR(obj: any): Cause[] {
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
  out.push(...validateSigner(spec.signerName));
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
    out.push(invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  return out;
}

export const csrStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) { obj.status = {}; },
  prepareForUpdate(obj, old) { obj.spec = old.spec; },
  validate: validateCSR,
};
