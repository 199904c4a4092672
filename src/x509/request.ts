/**
 * PKCS#10 certificate requests (upstream certificates.ParseCSR + x509.ParseCertificateRequest
 * and CheckSignature): the first PEM block must be a CERTIFICATE REQUEST; the subject, public
 * key, requested subject alternative names and signature are read from its DER.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { DerError, TAG, children, decodeOid, expectTag, readOne, type Tlv } from './der.js';
import { NameError, parseName, type Name } from './name.js';

export type { Name } from './name.js';

export interface CertificateRequest {
  /** DER of certificationRequestInfo: what the signature covers */
  info: Buffer;
  subject: Name;
  /** DER of SubjectPublicKeyInfo (made a KeyObject only to check the signature: that costs) */
  spki: Buffer;
  signatureAlgorithm: string;
  signature: Buffer;
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
  /** the requested subjectAltName extension value (DER), copied into issued certificates */
  subjectAltName?: Buffer;
}

const OID = {
  EXTENSION_REQUEST: '1.2.840.113549.1.9.14',
  SAN: '2.5.29.17',
};

export const PEM_TYPE_ERROR = 'PEM block type must be CERTIFICATE REQUEST';

/** The first PEM block of text (pem.Decode): its type and DER bytes; undefined when there is none. */
export function firstPemBlock(text: string): { type: string; der: Buffer; headers: boolean; rest: string } | undefined {
  const m = /-----BEGIN ([^-\r\n]*)-----\r?\n([\s\S]*?)-----END \1-----[ \t]*\r?\n?/.exec(text);
  if (!m) return undefined;
  const body = m[2]!;
  const headers = /^[^\r\n:]+:/.test(body);
  const b64 = headers ? body.replace(/^[\s\S]*?\r?\n\r?\n/, '') : body;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(b64)) return undefined;
  return {
    type: m[1]!,
    der: Buffer.from(b64.replace(/\s+/g, ''), 'base64'),
    headers,
    rest: text.slice(m.index + m[0].length),
  };
}

function ipText(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  return groups.join(':');
}

function readSan(csr: CertificateRequest, value: Buffer): void {
  csr.subjectAltName = value;
  for (const g of children(readOne(value, TAG.SEQUENCE))) {
    const text = g.content.toString('latin1');
    if (g.tag === 0x81) csr.emailAddresses.push(text);
    else if (g.tag === 0x82) csr.dnsNames.push(text);
    else if (g.tag === 0x86) csr.uris.push(text);
    else if (g.tag === 0x87) csr.ipAddresses.push(ipText(g.content));
  }
}

function readAttributes(csr: CertificateRequest, attrs: Tlv | undefined): void {
  if (!attrs) return;
  if (attrs.tag !== 0xa0) throw new DerError('bad attributes');
  for (const attr of children(attrs)) {
    const [type, values] = children(expectTag(attr, TAG.SEQUENCE));
    if (decodeOid(expectTag(type, TAG.OID).content) !== OID.EXTENSION_REQUEST) continue;
    for (const exts of children(expectTag(values, TAG.SET))) {
      for (const ext of children(expectTag(exts, TAG.SEQUENCE))) {
        const parts = children(expectTag(ext, TAG.SEQUENCE));
        const id = decodeOid(expectTag(parts[0], TAG.OID).content);
        const value = expectTag(parts[parts.length - 1], TAG.OCTET_STRING).content;
        if (id === OID.SAN) readSan(csr, value);
      }
    }
  }
}

/** Parses DER; throws an Error with Go's message on malformed input. */
export function parseRequestDer(der: Buffer): CertificateRequest {
  try {
    const [infoT, algT, sigT] = children(readOne(der, TAG.SEQUENCE));
    const info = children(expectTag(infoT, TAG.SEQUENCE));
    expectTag(info[0], TAG.INTEGER);
    const subject = parseName(expectTag(info[1], TAG.SEQUENCE), 'request');
    const spki = expectTag(info[2], TAG.SEQUENCE).raw;
    const alg = children(expectTag(algT, TAG.SEQUENCE));
    const sig = expectTag(sigT, TAG.BIT_STRING).content;
    const csr: CertificateRequest = {
      info: infoT!.raw,
      subject,
      spki,
      signatureAlgorithm: decodeOid(expectTag(alg[0], TAG.OID).content),
      signature: sig.subarray(1),
      dnsNames: [],
      emailAddresses: [],
      ipAddresses: [],
      uris: [],
    };
    readAttributes(csr, info[3]);
    return csr;
  } catch (e) {
    // a subject value Go's encoding/asn1 refuses keeps Go's message
    if (e instanceof NameError) throw new Error(e.message);
    if (e instanceof DerError || e instanceof RangeError || e instanceof TypeError)
      throw new Error('x509: malformed certificate request');
    throw e;
  }
}

/** upstream certificates.ParseCSR: the first PEM block, which must be a CERTIFICATE REQUEST. */
export function parseCSR(pem: Buffer | string): CertificateRequest {
  const block = firstPemBlock(typeof pem === 'string' ? pem : pem.toString('latin1'));
  if (block?.type !== 'CERTIFICATE REQUEST') throw new Error(PEM_TYPE_ERROR);
  return parseRequestDer(block.der);
}

/** signature algorithm OID -> [hash (null for Ed25519), key family, Go's failure message] */
const SIGNATURE_ALGORITHMS: Record<string, [string | null, string]> = {
  '1.2.840.113549.1.1.5': ['sha1', 'crypto/rsa: verification error'],
  '1.2.840.113549.1.1.11': ['sha256', 'crypto/rsa: verification error'],
  '1.2.840.113549.1.1.12': ['sha384', 'crypto/rsa: verification error'],
  '1.2.840.113549.1.1.13': ['sha512', 'crypto/rsa: verification error'],
  '1.2.840.10045.4.1': ['sha1', 'x509: ECDSA verification failure'],
  '1.2.840.10045.4.3.2': ['sha256', 'x509: ECDSA verification failure'],
  '1.2.840.10045.4.3.3': ['sha384', 'x509: ECDSA verification failure'],
  '1.2.840.10045.4.3.4': ['sha512', 'x509: ECDSA verification failure'],
  '1.3.101.112': [null, 'x509: Ed25519 verification failure'],
};

/** CheckSignature: undefined when the request is signed by its own key, else Go's message. */
export function checkSignature(csr: CertificateRequest): string | undefined {
  const alg = SIGNATURE_ALGORITHMS[csr.signatureAlgorithm];
  if (!alg) return 'x509: cannot verify signature: algorithm unimplemented';
  let key: KeyObject;
  try {
    key = createPublicKey({ key: csr.spki, format: 'der', type: 'spki' });
  } catch {
    return 'x509: unsupported public key';
  }
  try {
    return verify(alg[0], csr.info, key, csr.signature) ? undefined : alg[1];
  } catch {
    return alg[1];
  }
}
