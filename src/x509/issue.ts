/**
 * Issues an X.509 v3 certificate for a certificate request from a CA, as upstream's
 * authority.CA.Sign with the PermissiveSigningPolicy: subject (re-encoded from the parsed
 * request as Go's pkix.Name.ToRDNSequence, never the request's own bytes: the certificate says
 * exactly what the approver and the subject restriction saw), public key and subject
 * alternative names from the request, key usages from spec.usages, never a CA, notBefore
 * backdated 5 minutes for clock skew, never outliving the CA. Signing runs on
 * libuv's thread pool (crypto.sign with a callback), off the event loop.
 */
import { type X509Certificate, createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import {
  NULL,
  TAG,
  bitString,
  bool,
  children,
  decodeOid,
  explicit,
  octets,
  oid,
  readOne,
  seq,
  time,
  tlv,
  uint,
} from './der.js';
import type { CertificateRequest } from './request.js';
import { encodeName } from './name.js';

export interface SigningCA {
  cert: X509Certificate;
  key: KeyObject;
}

/** spec.usages -> KeyUsage bit (upstream keyUsageDict) */
const KEY_USAGE_BITS: Record<string, number> = {
  'signing': 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

/** spec.usages -> ExtKeyUsage OID (upstream extKeyUsageDict) */
const EXT_KEY_USAGES: Record<string, string> = {
  'any': '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  'timestamping': '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3_600_000;

/**
 * The certificate's validity (upstream PermissiveSigningPolicy): notBefore backdated 5 minutes
 * for clock skew; below 8 hours notAfter is now + ttl (the end is not backdated), from 8 hours
 * on now + ttl - 5 minutes; never beyond the CA's own notAfter.
 */
export function validity(now: number, ttlMs: number, caNotAfter: number): { notBefore: Date; notAfter: Date } {
  const notBefore = Math.floor((now - BACKDATE_MS) / 1000) * 1000;
  let notAfter = Math.floor((now + (ttlMs < SHORT_MS ? ttlMs : ttlMs - BACKDATE_MS)) / 1000) * 1000;
  const caEnd = new Date(caNotAfter).toISOString();
  if (notAfter >= caNotAfter) notAfter = caNotAfter;
  if (notBefore >= caNotAfter) throw new Error(`the signer has expired: NotAfter=${caEnd}`);
  if (now >= caNotAfter) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${caEnd}`);
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
}

function keyUsageExtension(usages: readonly string[]): Buffer[] {
  let bits = 0;
  for (const u of usages) if (u in KEY_USAGE_BITS) bits |= 1 << KEY_USAGE_BITS[u]!;
  const out: Buffer[] = [];
  if (bits) {
    // BIT STRING, bit 0 first; trailing zero bits are unused (DER)
    const bytes = bits > 0xff ? 2 : 1;
    const buf = Buffer.alloc(bytes);
    for (let i = 0; i < 9; i++) if (bits & (1 << i)) buf[i >> 3]! |= 0x80 >> (i & 7);
    let last = -1;
    for (let i = 0; i < 9; i++) if (bits & (1 << i)) last = i;
    out.push(seq(oid('2.5.29.15'), bool(true), octets(bitString(buf.subarray(0, (last >> 3) + 1), 7 - (last & 7)))));
  }
  // in Go's ExtKeyUsage order (upstream sorts them), which is the table's order
  const ekus = [
    ...new Set(
      Object.entries(EXT_KEY_USAGES)
        .filter(([u]) => usages.includes(u))
        .map(([, o]) => o),
    ),
  ];
  if (ekus.length) out.push(seq(oid('2.5.29.37'), octets(seq(...ekus.map(oid)))));
  return out;
}

/** The fields of a certificate's TBSCertificate, without the optional version. */
function tbsFields(cert: X509Certificate) {
  const fields = children(children(readOne(cert.raw, TAG.SEQUENCE))[0]!);
  return fields[0]!.tag === 0xa0 ? fields.slice(1) : fields;
}

/** The CA's subject key identifier (its extension, else the SHA-1 of its public key bits). */
function caKeyId(ca: X509Certificate): Buffer {
  const fields = tbsFields(ca);
  const exts = fields.find((f) => f.tag === 0xa3);
  for (const ext of exts ? children(children(exts)[0]!) : []) {
    const parts = children(ext);
    if (decodeOid(parts[0]!.content) === '2.5.29.14')
      return readOne(parts[parts.length - 1]!.content, TAG.OCTET_STRING).content;
  }
  const bits = children(fields[5]!)[1]!.content.subarray(1);
  return createHash('sha1').update(bits).digest();
}

/** [signature AlgorithmIdentifier DER, hash for crypto.sign] for the CA key. */
function signatureAlgorithm(key: KeyObject): [Buffer, string | null] {
  const t = key.asymmetricKeyType;
  if (t === 'rsa') return [seq(oid('1.2.840.113549.1.1.11'), NULL), 'sha256'];
  if (t === 'ed25519') return [seq(oid('1.3.101.112')), null];
  if (t === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'secp384r1') return [seq(oid('1.2.840.10045.4.3.3')), 'sha384'];
    if (curve === 'secp521r1') return [seq(oid('1.2.840.10045.4.3.4')), 'sha512'];
    return [seq(oid('1.2.840.10045.4.3.2')), 'sha256'];
  }
  throw new Error(`unsupported CA key type ${t}`);
}

/** The CA's subject, verbatim, as the issuer (serial, signature, issuer, validity, subject). */
const issuerName = (ca: X509Certificate): Buffer => tbsFields(ca)[4]!.raw;

/** Builds and signs the certificate; resolves with its PEM. */
export async function issueCertificate(
  csr: CertificateRequest,
  usages: readonly string[],
  ca: SigningCA,
  ttlMs: number,
  now = Date.now(),
): Promise<string> {
  const { notBefore, notAfter } = validity(now, ttlMs, Date.parse(ca.cert.validTo));
  const [algId, hash] = signatureAlgorithm(ca.key);
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const extensions = [
    ...keyUsageExtension(usages),
    seq(oid('2.5.29.19'), bool(true), octets(seq())),
    seq(oid('2.5.29.35'), octets(seq(tlv(0x80, caKeyId(ca.cert))))),
  ];
  if (csr.subjectAltName) extensions.push(seq(oid('2.5.29.17'), octets(csr.subjectAltName)));
  const tbs = seq(
    explicit(0, uint(Buffer.from([2]))),
    uint(serial),
    algId,
    issuerName(ca.cert),
    seq(time(notBefore), time(notAfter)),
    encodeName(csr.subject),
    csr.spki,
    explicit(3, seq(...extensions)),
  );
  const signature = await new Promise<Buffer>((resolve, reject) =>
    sign(hash, tbs, ca.key, (err, sig) => (err ? reject(err) : resolve(sig))),
  );
  const der = seq(tbs, algId, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}
