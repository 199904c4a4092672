/**
 * A protobuf writer over one reused scratch buffer, for the direct JSON → wire encoder
 * (wire-encoder.ts): scalars are written as protobufjs's BufferWriter writes them (the same
 * varints for int32/int64, little-endian doubles, UTF-8 strings), and a length-delimited
 * submessage is written in place with a one-byte length placeholder that is widened, moving its
 * content, only when the content reaches 128 bytes. One pass, no per-field operation queue.
 *
 * Not reentrant: one message is written at a time per thread (the caller copies it out, `take`).
 */

/** Raised inside a write when the value cannot be written exactly as the converter path would. */
export class WireFallback extends Error {}
/** One instance: thrown on the hot path without capturing a stack each time. */
export const FALLBACK = new WireFallback('protobuf: value left to the converter path');

/** Throws FALLBACK: the writers' and readers' way out to the converter path. */
export function fallback(): never {
  throw FALLBACK;
}

const INITIAL = 64 * 1024;
let buf: Buffer = Buffer.allocUnsafeSlow(INITIAL);
let pos = 0;

/** Makes room for n more bytes. */
function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

/** Starts a message: the scratch is empty. */
export function reset(): void {
  pos = 0;
}

/** Where `take` puts a message; `takeInto` swaps it for a LIST's bulk encoding (codec/item-slabs.ts). */
let allocTaken: (n: number) => Uint8Array = (n) => new Uint8Array(n);

/**
 * Runs f with `take` copying messages into alloc's views instead of buffers of their own;
 * restored afterwards (also when f throws).
 */
export function takeInto<T>(alloc: (n: number) => Uint8Array, f: () => T): T {
  const prev = allocTaken;
  allocTaken = alloc;
  try {
    return f();
  } finally {
    allocTaken = prev;
  }
}

/** The bytes written since `reset`, in a new buffer of their exact size (its own ArrayBuffer; within `takeInto`, alloc's view). */
export function take(): Uint8Array {
  const out = allocTaken(pos);
  buf.copy(out, 0, 0, pos);
  return out;
}

/** A tag or a varint below 2^32 (protobufjs uint32; callers pass non-negative integers). */
export function varint32(n: number): void {
  ensure(5);
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
}

/** Precomputed tag bytes (written as they are). */
export function raw(bytes: Uint8Array): void {
  ensure(bytes.length);
  buf.set(bytes, pos);
  pos += bytes.length;
}

/** protobufjs int64/uint64 of a JS number (LongBits.fromNumber, then the 64-bit varint). */
export function int64(value: number): void {
  let lo = 0;
  let hi = 0;
  if (value !== 0) {
    const negative = value < 0;
    if (negative) value = -value;
    lo = value >>> 0;
    hi = ((value - lo) / 4294967296) >>> 0;
    if (negative) {
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
      if (++lo > 4294967295) {
        lo = 0;
        if (++hi > 4294967295) hi = 0;
      }
    }
  }
  ensure(10);
  while (hi) {
    buf[pos++] = (lo & 127) | 128;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  while (lo > 127) {
    buf[pos++] = (lo & 127) | 128;
    lo >>>= 7;
  }
  buf[pos++] = lo;
}

/** protobufjs int32: the value's low 32 bits as a signed int; a negative one is a 10-byte varint. */
export function int32(value: number): void {
  const v = value | 0;
  if (v < 0) int64(v);
  else varint32(v);
}

export function bool(value: boolean): void {
  ensure(1);
  buf[pos++] = value ? 1 : 0;
}

export function double(value: number): void {
  ensure(8);
  buf.writeDoubleLE(value, pos);
  pos += 8;
}

export function bytes(value: Uint8Array): void {
  varint32(value.length);
  raw(value);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A string field: its UTF-8 length, then its bytes. ASCII (the usual case) is copied char by
 * char; anything else goes through Buffer. protobufjs writes short strings with lone
 * surrogates its own way (3-byte CESU forms where Buffer writes U+FFFD): those fall back.
 */
export function string(s: string): void {
  const n = s.length;
  if (n < 128) {
    ensure(n + 1);
    const start = pos;
    buf[pos++] = n;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[pos++] = c;
    }
    if (i === n) return;
    pos = start;
  }
  const len = Buffer.byteLength(s, 'utf8');
  if (len !== n && LONE_SURROGATE.test(s)) throw FALLBACK;
  utf8(s, len);
}

/**
 * A string field from a JSON string token's content, src[start, end) (between its quotes): plain
 * ASCII is copied from the source char by char; escapes or anything else take the decoded string.
 */
export function jsonString(src: string, start: number, end: number): void {
  const n = end - start;
  if (n < 128) {
    ensure(n + 1);
    const at = pos;
    buf[pos++] = n;
    let i = start;
    for (; i < end; i++) {
      const c = src.charCodeAt(i);
      if (c >= 0x80 || c === 0x5c) break;
      buf[pos++] = c;
    }
    if (i === end) return;
    pos = at;
  }
  const bs = src.indexOf('\\', start);
  string(bs < 0 || bs >= end ? src.slice(start, end) : (JSON.parse(src.slice(start - 1, end + 1)) as string));
}

/** A bytes field holding Buffer.from(s) (raw JSON): Buffer's UTF-8, lone surrogates as U+FFFD. */
export function stringAsBytes(s: string): void {
  utf8(s, Buffer.byteLength(s, 'utf8'));
}

function utf8(s: string, len: number): void {
  varint32(len);
  ensure(len);
  // an ASCII string is its own Latin-1 bytes: a plain copy
  pos += buf.write(s, pos, len, len === s.length ? 'latin1' : 'utf8');
}

/** Opens a length-delimited field's content (after its tag); pass the answer to `close`. */
export function open(): number {
  ensure(1);
  pos++;
  return pos;
}

/** Writes the length of the content opened at `start`, widening its placeholder when needed. */
export function close(start: number): void {
  const len = pos - start;
  if (len < 0x80) {
    buf[start - 1] = len;
    return;
  }
  let extra = 0;
  for (let n = len >>> 7; n > 0; n >>>= 7) extra++;
  ensure(extra);
  buf.copyWithin(start + extra, start, pos);
  let at = start - 1;
  let n = len;
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at] = n;
  pos += extra;
}

/** Tag bytes packed low byte first (text-plan.ts packTag). */
export function tag(packed: number): void {
  ensure(4);
  while (packed) {
    buf[pos++] = packed & 0xff;
    packed >>>= 8;
  }
}

/**
 * A string field from the UTF-8 bytes of a JSON string token's content, from[start, end): its
 * length and the bytes as they are. False (nothing written) when it holds an escape: the caller
 * writes the decoded string.
 */
export function utf8Token(from: Uint8Array, start: number, end: number): boolean {
  const n = end - start;
  ensure(n + 5);
  const at = pos;
  varint32(n);
  let q = pos;
  const b = buf;
  for (let i = start; i < end; i++) {
    const c = from[i]!;
    if (c === 0x5c) {
      pos = at;
      return false;
    }
    b[q++] = c;
  }
  pos = q;
  return true;
}

/** A bytes field holding from[start, end) as they are (raw JSON). */
export function bytesOf(from: Buffer, start: number, end: number): void {
  varint32(end - start);
  ensure(end - start);
  pos += from.copy(buf, pos, start, end);
}
