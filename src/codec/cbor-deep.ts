/**
 * CBOR encoding of the JSON data model with an explicit stack, for values nested too deep for
 * cbor-x's recursive encoder (RangeError past a few thousand levels). Only objects stored by an
 * older version can nest that deep (see schema/deep-value.ts); they must stay readable. The
 * bytes are those cbor-x writes with the options of cbor.ts: integers of 32 bits as integers,
 * other numbers as float64, definite-length arrays and maps, text keys; like JSON, a member
 * whose value is undefined is left out and an undefined array element is null.
 */

class Writer {
  private buf = Buffer.allocUnsafe(4096);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  /** A head: major type and argument (under 2^32). */
  head(major: number, n: number): void {
    this.room(5);
    const m = major << 5;
    if (n < 24) this.buf[this.length++] = m | n;
    else if (n < 0x100) {
      this.buf[this.length++] = m | 24;
      this.buf[this.length++] = n;
    } else if (n < 0x10000) {
      this.buf[this.length++] = m | 25;
      this.buf.writeUInt16BE(n, this.length);
      this.length += 2;
    } else {
      this.buf[this.length++] = m | 26;
      this.buf.writeUInt32BE(n, this.length);
      this.length += 4;
    }
  }

  text(s: string): void {
    const n = Buffer.byteLength(s);
    this.head(3, n);
    this.room(n);
    this.length += this.buf.write(s, this.length);
  }

  number(v: number): void {
    if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return this.head(0, v);
    if (Number.isInteger(v) && v < 0 && v >= -0x100000000) return this.head(1, -1 - v);
    this.room(9);
    this.buf[this.length++] = 0xfb;
    this.buf.writeDoubleBE(v, this.length);
    this.length += 8;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length);
  }
}

/** A map key waiting on the stack (values are pushed as they are). */
class Key {
  constructor(readonly name: string) {}
}

/** One data item (no self-described tag) for a value of the JSON data model, at any depth. */
export function encodeCborIterative(root: unknown): Uint8Array {
  const w = new Writer();
  const pending: unknown[] = [root];
  while (pending.length) {
    const v = pending.pop();
    if (v instanceof Key) w.text(v.name);
    else if (v === null || v === undefined) w.byte(0xf6);
    else if (v === true) w.byte(0xf5);
    else if (v === false) w.byte(0xf4);
    else if (typeof v === 'number') w.number(v);
    else if (typeof v === 'string') w.text(v);
    else if (Array.isArray(v)) {
      w.head(4, v.length);
      for (let i = v.length - 1; i >= 0; i--) pending.push(v[i]);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined);
      w.head(5, entries.length);
      // pushed in reverse, each value before its key: popped as key, value, key, value...
      for (let i = entries.length - 1; i >= 0; i--) pending.push(entries[i]![1], new Key(entries[i]![0]));
    } else {
      throw new TypeError(`cbor: cannot encode a ${typeof v}`);
    }
  }
  return w.bytes();
}
