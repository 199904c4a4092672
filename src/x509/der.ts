/**
 * A minimal DER reader and writer: exactly what PKCS#10 requests and X.509 certificates need
 * (definite lengths only, as DER requires). Readers throw DerError on malformed input.
 */

export class DerError extends Error {}

/** One TLV: tag byte, the whole encoding (raw) and its contents. */
export interface Tlv {
  tag: number;
  raw: Buffer;
  content: Buffer;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8: 0x0c,
  PRINTABLE: 0x13,
  T61: 0x14,
  IA5: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  BMP: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** Reads the TLV at offset; `end` is where the next one starts. */
export function readTlv(buf: Buffer, offset = 0): Tlv & { end: number } {
  if (offset + 2 > buf.length) throw new DerError('truncated');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not supported');
  let len = buf[offset + 1]!;
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError('indefinite or oversized length');
    if (offset + 2 + n > buf.length) throw new DerError('truncated');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[offset + 2 + i]!;
    header += n;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new DerError('truncated');
  return { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + header, end), end };
}

/** Reads one TLV that must fill buf exactly. */
export function readOne(buf: Buffer, tag?: number): Tlv {
  const t = readTlv(buf, 0);
  if (t.end !== buf.length) throw new DerError('trailing data');
  if (tag !== undefined && t.tag !== tag)
    throw new DerError(`expected tag 0x${tag.toString(16)}, got 0x${t.tag.toString(16)}`);
  return t;
}

/** The TLVs inside a constructed value. */
export function children(t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let off = 0; off < t.content.length; ) {
    const c = readTlv(t.content, off);
    out.push(c);
    off = c.end;
  }
  return out;
}

export function expectTag(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new DerError(`expected tag 0x${tag.toString(16)}`);
  return t;
}

export function decodeOid(content: Buffer): string {
  if (content.length === 0) throw new DerError('empty OID');
  const parts: number[] = [];
  let v = 0;
  for (const b of content) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  const first = parts.shift()!;
  const a = first < 80 ? Math.floor(first / 40) : 2;
  return [a, first - a * 40, ...parts].join('.');
}

// ---- writer ----

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(TAG.SEQUENCE, ...items);

export function oid(s: string): Buffer {
  const p = s.split('.').map(Number);
  const out: number[] = [];
  const arcs = [p[0]! * 40 + p[1]!, ...p.slice(2)];
  for (const arc of arcs) {
    const b: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) b.unshift(0x80 | (v & 0x7f));
    out.push(...b);
  }
  return tlv(TAG.OID, Buffer.from(out));
}

/** A non-negative INTEGER from its big-endian magnitude. */
export function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const m = bytes.subarray(i);
  return tlv(TAG.INTEGER, m[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

export const bool = (v: boolean): Buffer => tlv(TAG.BOOLEAN, Buffer.from([v ? 0xff : 0]));
export const octets = (b: Buffer): Buffer => tlv(TAG.OCTET_STRING, b);
export const bitString = (b: Buffer, unused = 0): Buffer => tlv(TAG.BIT_STRING, Buffer.from([unused]), b);
export const NULL = Buffer.from([TAG.NULL, 0]);

/** Explicitly tagged context-specific value ([n] EXPLICIT). */
export const explicit = (n: number, ...inner: Buffer[]): Buffer => tlv(0xa0 | n, ...inner);

/** RFC 5280 Time: UTCTime through 2049, GeneralizedTime after. */
export function time(d: Date): Buffer {
  const iso = d.toISOString();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(TAG.UTC_TIME, Buffer.from(digits.slice(2) + 'Z', 'latin1'));
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(digits + 'Z', 'latin1'));
}
