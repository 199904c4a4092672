/**
 * LZ4 block compression against a fixed dictionary, on the calling thread, producing exactly the
 * value format lmdb-js stores and reads back (src/storage/lmdb/store-options.ts): a first byte
 * 254 and the uncompressed length in three big-endian bytes (255 and eight bytes from 16 MiB),
 * then one LZ4 block whose matches may reach into the dictionary as if it preceded the value.
 * lmdb-js decompresses any value of that form with LZ4_decompress_safe_usingDict against the
 * same dictionary, so values compressed here read back through the store as its own do.
 *
 * Why not lmdb-js's own compression: it compresses each value in a libuv work item of its own
 * (a thread hand-off and a completion on the calling event loop per value) and re-hashes the
 * 10 KB dictionary for every value (LZ4_loadDict): ≈ 20 µs of CPU per 1.4 KB value measured on
 * the calling thread, more with the hand-offs. Here the dictionary's hash table is built once
 * and copied per value (16 KB), and the value is encoded straight behind the dictionary's bytes.
 *
 * The match finder is LZ4's fast one as lmdb-js builds it (a table of 4,096 positions by LZ4's
 * 5-byte hash, the dictionary's every third position loaded first, greedy, skipping ahead on long
 * runs without a match): the output is the size lmdb-js's is (3,000 density Pods: 313.0 B each
 * both ways; a 4-byte hash made them 12% larger), with other match offsets in places.
 */

const HASH_LOG = 12;
const MIN_MATCH = 4;
/** the last 5 bytes of a block are literals (LZ4 format) */
const LAST_LITERALS = 5;
/** the last match starts at least 12 bytes before the end of the block (LZ4 format) */
const MF_LIMIT = 12;
const MAX_DISTANCE = 65_535;
/** after 2^SKIP_TRIGGER positions without a match, the search steps over more than one */
const SKIP_TRIGGER = 6;
const SHORT_HEADER = 4;
const LONG_HEADER = 8;
const LONG_LENGTH = 0x1000000;
/** scratch room kept between values (bytes of UTF-8 after the dictionary); a larger value's is let go after it */
const KEPT_ROOM = 64 * 1024;

/** LZ4's 5-byte hash on 64-bit builds (LZ4_hash5: ((bytes << 24) * 889523592379) >> (64 - HASH_LOG)) in 32-bit halves. */
const PRIME5_LOW = 0x1bbcdcbb;
const PRIME5_HIGH = 0xcf;
function hash5(buf: Uint8Array, view: DataView, p: number): number {
  // in bounds by the callers (a Uint8Array index is never undefined there)
  const b0 = buf[p] as number;
  const high = view.getInt32(p + 1, true);
  // the product's high 32 bits: high × low prime, plus the first byte's part (FIRST_BYTE_TERM)
  return ((Math.imul(high, PRIME5_LOW) + (FIRST_BYTE_TERM[b0] as number)) >>> 0) >>> (32 - HASH_LOG);
}

/**
 * hash5's terms of the first byte b0, modulo 2^32: (b0 << 24) × high prime, and the carry of
 * (b0 << 24) × low prime into the high 32 bits (a table instead of a float division per position).
 */
const FIRST_BYTE_TERM = Int32Array.from(
  { length: 256 },
  (_, b0) => Math.imul(b0 << 24, PRIME5_HIGH) + Math.floor((b0 * PRIME5_LOW) / 256),
);

/** A DataView of a buffer's bytes (4-byte loads and compares: DataView's are inlined by the JIT). */
function viewOf(buf: Buffer): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Writes an LZ4 length continuation (after a nibble of 15) at op; returns the next position. */
function writeLength(out: Uint8Array, op: number, rest: number): number {
  let r = rest;
  while (r >= 255) {
    out[op++] = 255;
    r -= 255;
  }
  out[op++] = r;
  return op;
}

/** The compressed value's header (lmdb-js's): 254 + 3 bytes of length, or 255 + 7 bytes. */
function writeHeader(out: Uint8Array, n: number): number {
  if (n < LONG_LENGTH) {
    out[0] = 254;
    out[1] = (n >>> 16) & 255;
    out[2] = (n >>> 8) & 255;
    out[3] = n & 255;
    return SHORT_HEADER;
  }
  out.fill(0, 0, LONG_HEADER);
  out[0] = 255;
  out[4] = (n >>> 24) & 255;
  out[5] = (n >>> 16) & 255;
  out[6] = (n >>> 8) & 255;
  out[7] = n & 255;
  return LONG_HEADER;
}

export class DictionaryCompressor {
  private readonly dictSize: number;
  /** the dictionary's bytes, then the value being compressed */
  private buf: Buffer;
  /** buf's bytes as a DataView */
  private view: DataView;
  private out: Buffer;
  /** positions (in buf) by the hash of their 5 bytes (hash5); -1 for none */
  private readonly table = new Int32Array(1 << HASH_LOG);
  /** the table as the dictionary alone fills it (LZ4_loadDict: every third position) */
  private readonly dictTable = new Int32Array(1 << HASH_LOG);
  /** the scratch buffers kept between values (buf and out grow for a large value, then return to these) */
  private readonly small: readonly [Buffer, Buffer, DataView];

  constructor(dictionary: Uint8Array) {
    this.dictSize = dictionary.length;
    this.buf = Buffer.alloc(this.dictSize + 4096);
    this.buf.set(dictionary, 0);
    this.view = viewOf(this.buf);
    this.out = Buffer.alloc(4096);
    this.small = [this.buf, this.out, this.view];
    this.dictTable.fill(-1);
    for (let p = 0; p + 8 <= this.dictSize; p += 3) this.dictTable[hash5(this.buf, this.view, p)] = p;
  }

  /**
   * The value compressed in lmdb-js's format, as a Buffer of its own (the store keeps a reference
   * until the write is done), or undefined when its UTF-8 is shorter than minBytes or
   * compressing does not make it shorter.
   */
  compress(value: string, minBytes = 0): Buffer | undefined {
    const room = value.length * 3;
    if (this.buf.length < this.dictSize + room) this.grow(room);
    const result = this.compressed(value, minBytes);
    if (room > KEPT_ROOM) [this.buf, this.out, this.view] = this.small;
    return result;
  }

  private compressed(value: string, minBytes: number): Buffer | undefined {
    const n = this.buf.write(value, this.dictSize, 'utf8');
    if (n < minBytes) return undefined;
    const size = this.block(n);
    if (size >= n) return undefined;
    const result = Buffer.allocUnsafe(size);
    this.out.copy(result, 0, 0, size);
    return result;
  }

  private grow(room: number): void {
    const buf = Buffer.alloc(this.dictSize + room);
    this.buf.copy(buf, 0, 0, this.dictSize);
    this.buf = buf;
    this.view = viewOf(buf);
  }

  /** Compresses buf[dictSize, dictSize + n) into out with its header; returns the total size. */
  private block(n: number): number {
    const bound = n + Math.ceil(n / 255) + 64;
    if (this.out.length < bound) this.out = Buffer.alloc(bound);
    const { buf, view, out, table } = this;
    const base = this.dictSize;
    const end = base + n;
    let op = writeHeader(out, n);
    let anchor = base;
    if (n >= MF_LIMIT + 1) {
      table.set(this.dictTable);
      const matchLimit = end - LAST_LITERALS;
      const lastStart = end - MF_LIMIT;
      let ip = base;
      let searched = 1 << SKIP_TRIGGER;
      while (ip <= lastStart) {
        const h = hash5(buf, view, ip);
        const ref = table[h] ?? -1;
        table[h] = ip;
        if (ref < 0 || ip - ref > MAX_DISTANCE || view.getInt32(ref, true) !== view.getInt32(ip, true)) {
          ip += searched++ >>> SKIP_TRIGGER;
          continue;
        }
        // back over equal bytes before the match (not past the literals' start or the dictionary's)
        let start = ip;
        let from = ref;
        while (start > anchor && from > 0 && buf[start - 1] === buf[from - 1]) {
          start--;
          from--;
        }
        let stop = ip + MIN_MATCH;
        let cmp = ref + MIN_MATCH;
        // four bytes at a time while they are equal, then byte by byte
        while (stop + 4 <= matchLimit && view.getInt32(stop, true) === view.getInt32(cmp, true)) {
          stop += 4;
          cmp += 4;
        }
        while (stop < matchLimit && buf[stop] === buf[cmp]) {
          stop++;
          cmp++;
        }
        op = this.sequence(op, anchor, start, ip - ref, stop - start);
        anchor = ip = stop;
        if (ip - 2 >= base) table[hash5(buf, view, ip - 2)] = ip - 2;
        searched = 1 << SKIP_TRIGGER;
      }
    }
    // the last literals, in a sequence of their own without a match
    const lit = end - anchor;
    const token = op++;
    if (lit >= 15) {
      out[token] = 0xf0;
      op = writeLength(out, op, lit - 15);
    } else out[token] = lit << 4;
    buf.copy(out, op, anchor, end);
    return op + lit;
  }

  /** One sequence: the literals buf[anchor, start), then a match of length at offset. */
  private sequence(at: number, anchor: number, start: number, offset: number, length: number): number {
    const { buf, out } = this;
    let op = at;
    const lit = start - anchor;
    const token = op++;
    let tokenByte = 0;
    if (lit >= 15) {
      tokenByte = 0xf0;
      op = writeLength(out, op, lit - 15);
    } else tokenByte = lit << 4;
    if (lit > 16) buf.copy(out, op, anchor, start);
    else for (let i = 0; i < lit; i++) out[op + i] = buf[anchor + i] as number;
    op += lit;
    out[op++] = offset & 255;
    out[op++] = offset >>> 8;
    const extra = length - MIN_MATCH;
    if (extra >= 15) {
      tokenByte |= 15;
      op = writeLength(out, op, extra - 15);
    } else tokenByte |= extra;
    out[token] = tokenByte;
    return op;
  }
}
