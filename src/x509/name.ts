/**
 * X.509 distinguished names, read and written as Go's crypto/x509 does, so that every part of
 * the server sees one reading of a subject: the CSR strategy and signers (upstream reads a
 * request's subject with encoding/asn1), the issuer (upstream re-encodes the parsed subject with
 * pkix.Name.ToRDNSequence, never copying the request's bytes), and the TLS front (upstream reads
 * a client certificate's subject with the strict cryptobyte parser).
 *
 * pkix.Name.FillFromRDNSequence: a repeated single-valued attribute (CN, serialNumber) keeps the
 * LAST value; list attributes (O, OU, C, L, ST, street, postalCode) keep every value in order.
 */
import { DerError, TAG, children, decodeOid, expectTag, oid, readOne, tlv, type Tlv } from './der.js';

/** The standard attributes of a name (pkix.Name without Names/ExtraNames). */
export interface Name {
  country: string[];
  organization: string[];
  organizationalUnit: string[];
  locality: string[];
  province: string[];
  streetAddress: string[];
  postalCode: string[];
  serialNumber: string;
  commonName: string;
}

/**
 * How values that are not strings Go knows are treated: 'request' is encoding/asn1 reading a
 * CSR subject into `any` (unknown types, UniversalString among them, become nil and are
 * skipped); 'certificate' is x509.ParseCertificate (any such value fails the parse).
 */
export type NameMode = 'request' | 'certificate';

/** A name Go refuses to parse; the message is Go's. */
export class NameError extends DerError {}

const TAGS = { NUMERIC: 0x12, UNIVERSAL: 0x1c, VISIBLE: 0x1a } as const;

/** Go's isPrintable with '*' and '&' admitted (as both parsers do). */
const isPrintable = (b: number): boolean =>
  (b >= 0x61 && b <= 0x7a) ||
  (b >= 0x41 && b <= 0x5a) ||
  (b >= 0x30 && b <= 0x39) ||
  b === 0x27 ||
  b === 0x28 ||
  b === 0x29 ||
  b === 0x2b ||
  b === 0x2c ||
  b === 0x2d ||
  b === 0x2e ||
  b === 0x2f ||
  b === 0x3a ||
  b === 0x3d ||
  b === 0x3f ||
  b === 0x20 ||
  b === 0x2a ||
  b === 0x26;

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

function decodeBmp(v: Buffer, strict: boolean): string {
  if (v.length % 2 !== 0) throw new NameError(strict ? 'invalid BMPString' : 'pkcs12: odd-length BMP string');
  if (v.length >= 2 && v[v.length - 1] === 0 && v[v.length - 2] === 0) v = v.subarray(0, v.length - 2);
  const units: number[] = [];
  for (let i = 0; i < v.length; i += 2) {
    const p = v.readUInt16BE(i);
    if (strict && (p === 0xfffe || p === 0xffff || (p >= 0xfdd0 && p <= 0xfdef) || (p >= 0xd800 && p <= 0xdfff)))
      throw new NameError('invalid BMPString');
    units.push(p);
  }
  // utf16.Decode: unpaired surrogates become U+FFFD
  return String.fromCharCode(...units).replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
}

/**
 * The text of one attribute value as Go reads it, or undefined when Go leaves it out (request
 * mode, a type encoding/asn1 does not decode to a string). Throws NameError where Go fails.
 */
export function directoryString(t: Tlv, mode: NameMode): string | undefined {
  const v = t.content;
  const fail = (what: string) => {
    throw new NameError(
      mode === 'certificate'
        ? `x509: invalid RDNSequence: invalid attribute value: invalid ${what}`
        : `asn1: syntax error: ${what} contains invalid character`,
    );
  };
  switch (t.tag) {
    case TAG.PRINTABLE:
      if (!v.every(isPrintable)) fail('PrintableString');
      return v.toString('latin1');
    case TAG.IA5:
      if (!v.every((b) => b < 0x80)) fail('IA5String');
      return v.toString('latin1');
    case TAGS.NUMERIC:
      if (!v.every((b) => (b >= 0x30 && b <= 0x39) || b === 0x20)) fail('NumericString');
      return v.toString('latin1');
    case TAG.UTF8:
      try {
        return utf8Decoder.decode(v);
      } catch {
        throw new NameError(
          mode === 'certificate'
            ? 'x509: invalid RDNSequence: invalid attribute value: invalid UTF-8 string'
            : 'asn1: syntax error: invalid UTF-8 string',
        );
      }
    // Go keeps T61String bytes as they are (string(value)); as text, invalid UTF-8 is U+FFFD
    case TAG.T61:
      return v.toString('utf8');
    case TAG.BMP:
      try {
        return decodeBmp(v, mode === 'certificate');
      } catch (e) {
        if (mode === 'certificate')
          throw new NameError(`x509: invalid RDNSequence: invalid attribute value: ${(e as Error).message}`);
        throw e;
      }
    default:
      // UniversalString (0x1c), VisibleString, GeneralString, INTEGER, ...: no string to Go
      if (mode === 'certificate')
        throw new NameError(`x509: invalid RDNSequence: invalid attribute value: unsupported string type: ${t.tag}`);
      return undefined;
  }
}

const OIDS = {
  C: '2.5.4.6',
  ST: '2.5.4.8',
  L: '2.5.4.7',
  STREET: '2.5.4.9',
  POSTAL: '2.5.4.17',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  CN: '2.5.4.3',
  SERIAL: '2.5.4.5',
} as const;

const LISTS: Record<string, Exclude<keyof Name, 'commonName' | 'serialNumber'>> = {
  [OIDS.C]: 'country',
  [OIDS.ST]: 'province',
  [OIDS.L]: 'locality',
  [OIDS.STREET]: 'streetAddress',
  [OIDS.POSTAL]: 'postalCode',
  [OIDS.O]: 'organization',
  [OIDS.OU]: 'organizationalUnit',
};

export const emptyName = (): Name => ({
  country: [],
  organization: [],
  organizationalUnit: [],
  locality: [],
  province: [],
  streetAddress: [],
  postalCode: [],
  serialNumber: '',
  commonName: '',
});

/** Reads a Name (RDNSequence) with Go's FillFromRDNSequence semantics. */
export function parseName(t: Tlv, mode: NameMode): Name {
  expectTag(t, TAG.SEQUENCE);
  const name = emptyName();
  for (const rdn of children(t)) {
    for (const atv of children(expectTag(rdn, TAG.SET))) {
      const parts = children(expectTag(atv, TAG.SEQUENCE));
      if (parts.length !== 2)
        throw new NameError(
          mode === 'certificate'
            ? 'x509: invalid RDNSequence: invalid attribute'
            : 'asn1: syntax error: sequence truncated',
        );
      const type = decodeOid(expectTag(parts[0], TAG.OID).content);
      const value = directoryString(parts[1]!, mode);
      if (value === undefined) continue;
      if (type === OIDS.CN) name.commonName = value;
      else if (type === OIDS.SERIAL) name.serialNumber = value;
      else if (LISTS[type]) name[LISTS[type]].push(value);
    }
  }
  return name;
}

/** The subject of a DER certificate, read as x509.ParseCertificate does. */
export function certificateSubject(der: Buffer): Name {
  const tbs = children(expectTag(children(readOne(der, TAG.SEQUENCE))[0], TAG.SEQUENCE));
  const fields = tbs[0]?.tag === 0xa0 ? tbs.slice(1) : tbs;
  return parseName(fields[4]!, 'certificate');
}

/** asn1.Marshal of a plain Go string: PrintableString when it can be ('*' and '&' excluded), else UTF8String. */
function marshalString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  const printable = bytes.every((b) => isPrintable(b) && b !== 0x2a && b !== 0x26);
  return tlv(printable ? TAG.PRINTABLE : TAG.UTF8, bytes);
}

/** DER SET OF: elements in ascending order of their encodings. */
const setOf = (items: Buffer[]): Buffer => tlv(TAG.SET, ...[...items].sort(Buffer.compare));

/**
 * pkix.Name.ToRDNSequence, marshalled: C, ST, L, street, postalCode, O, OU, CN, serialNumber,
 * each present attribute one RDN holding all its values.
 */
export function encodeName(n: Name): Buffer {
  const rdns: Buffer[] = [];
  const add = (values: readonly string[], type: string) => {
    if (values.length) rdns.push(setOf(values.map((v) => tlv(TAG.SEQUENCE, oid(type), marshalString(v)))));
  };
  add(n.country, OIDS.C);
  add(n.province, OIDS.ST);
  add(n.locality, OIDS.L);
  add(n.streetAddress, OIDS.STREET);
  add(n.postalCode, OIDS.POSTAL);
  add(n.organization, OIDS.O);
  add(n.organizationalUnit, OIDS.OU);
  if (n.commonName) add([n.commonName], OIDS.CN);
  if (n.serialNumber) add([n.serialNumber], OIDS.SERIAL);
  return tlv(TAG.SEQUENCE, ...rdns);
}
