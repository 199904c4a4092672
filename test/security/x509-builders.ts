/**
 * Hand-built PKCS#10 requests and certificates with arbitrary subject encodings (every ASN.1
 * string type, repeated CNs, multi-valued RDNs): openssl's CLI cannot write most of them.
 */
import { type X509Certificate, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { TAG, bitString, children, explicit, oid, readOne, seq, time, tlv, uint } from '../../src/x509/der.js';

export const OID_CN = '2.5.4.3';
export const OID_O = '2.5.4.10';

/** ASN.1 string tags by name. */
export const STRING_TAGS = {
  UTF8String: 0x0c,
  NumericString: 0x12,
  PrintableString: 0x13,
  T61String: 0x14,
  IA5String: 0x16,
  VisibleString: 0x1a,
  GeneralString: 0x1b,
  UniversalString: 0x1c,
  BMPString: 0x1e,
} as const;
export type StringType = keyof typeof STRING_TAGS;

/** The encoding of text as a value of the given string type (UTF-16BE, UTF-32BE where the type says). */
export function encodeText(type: StringType, text: string): Buffer {
  if (type === 'BMPString') return Buffer.from(text, 'utf16le').swap16();
  if (type === 'UniversalString') {
    const cps = [...text].map((c) => c.codePointAt(0)!);
    const b = Buffer.alloc(cps.length * 4);
    cps.forEach((cp, i) => b.writeUInt32BE(cp, i * 4));
    return b;
  }
  return Buffer.from(text, type === 'T61String' ? 'latin1' : 'utf8');
}

/** One attribute: type OID, string type, text (or raw value bytes). */
export interface Attr {
  oid: string;
  type: StringType;
  text?: string;
  bytes?: Buffer;
}

const atv = (a: Attr): Buffer => seq(oid(a.oid), tlv(STRING_TAGS[a.type], a.bytes ?? encodeText(a.type, a.text ?? '')));

/** A Name: each inner array is one RDN (several attributes = a multi-valued RDN). */
export const name = (...rdns: Attr[][]): Buffer => seq(...rdns.map((rdn) => tlv(TAG.SET, ...rdn.map(atv))));

export const cn = (text: string, type: StringType = 'UTF8String'): Attr[] => [{ oid: OID_CN, type, text }];
export const org = (text: string, type: StringType = 'UTF8String'): Attr[] => [{ oid: OID_O, type, text }];

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}
export const ecKey = (): KeyPair => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

const pem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;

/** A PKCS#10 request for subject, signed by key. */
export function csrPem(subject: Buffer, key: KeyPair = ecKey()): string {
  const spki = key.publicKey.export({ type: 'spki', format: 'der' });
  const info = seq(uint(Buffer.from([0])), subject, spki, tlv(0xa0));
  return pem('CERTIFICATE REQUEST', seq(info, ECDSA_SHA256, bitString(sign('sha256', info, key.privateKey))));
}

/** A client certificate for subject issued by the CA (cert + EC key), valid for a day. */
export function certPem(subject: Buffer, ca: { cert: X509Certificate; key: KeyObject }, key: KeyPair): string {
  const caTbs = children(children(readOne(ca.cert.raw, TAG.SEQUENCE))[0]!);
  const issuer = (caTbs[0]!.tag === 0xa0 ? caTbs.slice(1) : caTbs)[4]!.raw;
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const now = Date.now();
  const eku = seq(oid('2.5.29.37'), tlv(TAG.OCTET_STRING, seq(oid('1.3.6.1.5.5.7.3.2'))));
  const tbs = seq(
    explicit(0, uint(Buffer.from([2]))),
    uint(serial),
    ECDSA_SHA256,
    issuer,
    seq(time(new Date(now - 60_000)), time(new Date(now + 86_400_000))),
    subject,
    key.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(eku)),
  );
  return pem('CERTIFICATE', seq(tbs, ECDSA_SHA256, bitString(sign('sha256', tbs, ca.key))));
}

export const derOf = (p: string): Buffer =>
  Buffer.from(p.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
export const keyPem = (k: KeyPair): string => k.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
