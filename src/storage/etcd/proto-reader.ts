/**
 * A reader of protobuf wire bytes in buf[start, end) for the etcd codecs (txn-codec.ts,
 * watch-codec.ts): varints below 2^53 as numbers, int64 as decimal strings, length-delimited
 * bodies as spans of the received buffer (no copy).
 */

/** the value of an empty bytes field (shared, never written) */
export const EMPTY = Buffer.alloc(0);
const TWO_53 = 2 ** 53;

export class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  /** a varint below 2^53 as a number; -1 when it is larger (int64() reads it as a string) */
  small(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('etcd codec: truncated varint');
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n < TWO_53 ? n : -1;
      mul *= 128;
    }
  }
  /** an int64 (signed, or unsigned for uint64) as proto-loader's decimal string */
  int64(unsigned = false): string {
    const start = this.pos;
    const n = this.small();
    if (n >= 0) return String(n);
    let v = 0n;
    let shift = 0n;
    for (let p = start; p < this.pos; p++, shift += 7n) v |= BigInt(this.buf[p]! & 0x7f) << shift;
    return String(unsigned ? BigInt.asUintN(64, v) : BigInt.asIntN(64, v));
  }
  /** the body of a length-delimited field: [start, end) */
  span(): [number, number] {
    const len = this.small();
    const start = this.pos;
    this.pos += len;
    if (len < 0 || this.pos > this.end) throw new Error('etcd codec: truncated field');
    return [start, this.pos];
  }
  bytes(): Buffer {
    const [s, e] = this.span();
    return s === e ? EMPTY : this.buf.subarray(s, e);
  }
  skip(wire: number): void {
    if (wire === 0) this.small();
    else if (wire === 2) this.span();
    else if (wire === 1 || wire === 5) {
      this.pos += wire === 1 ? 8 : 4;
      if (this.pos > this.end) throw new Error('etcd codec: truncated field');
    } else throw new Error(`etcd codec: unsupported wire type ${wire}`);
  }
  /** reads the fields of the length-delimited message at pos, one call per field */
  fields(each: (r: Reader, field: number, wire: number) => void): void {
    const [s, e] = this.span();
    const r = new Reader(this.buf, s, e);
    while (r.pos < r.end) {
      const tag = r.small();
      each(r, Math.floor(tag / 8), tag & 7);
    }
  }
}
