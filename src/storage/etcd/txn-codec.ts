/**
 * The wire bytes of the one etcd call on the write path, `etcdserverpb.KV/Txn`, built and read
 * by hand: the commit's transaction is encoded straight from its compares and writes into one
 * buffer (field tags precomputed; rpc.proto's messages are small), and of the answer only the
 * two fields the backend reads are decoded (header.revision, succeeded), as plain numbers. The
 * general client (etcd3 over protobufjs) builds a message object per compare and operation,
 * converts every int64 through `Long`, and decodes every per-operation response header; on a
 * transaction of 16 creates that was most of the client's CPU (docs/etcd.md, "Client codec").
 *
 * Only what the backend sends is supported: compares of Mod, Create (revision 0) or Value with
 * result Equal, and puts and deletes of single keys. The bytes equal protobufjs's encoding of
 * the same request (test/storage/etcd/txn-codec.test.ts).
 */
import type { ICompare } from 'etcd3';

/** One write of a transaction: a put of value, or a delete of key when value is undefined. */
export interface TxnOp {
  key: Buffer;
  value: string | Buffer | undefined;
}

/** What the backend reads of a TxnResponse. */
export interface TxnAnswer {
  /** the etcd revision of the store after the transaction (header.revision) */
  revision: number;
  succeeded: boolean;
}

// field tags: (field number << 3) | wire type (0 varint, 2 length-delimited)
const TXN_COMPARE = 0x0a; // TxnRequest.compare = 1
const TXN_SUCCESS = 0x12; // TxnRequest.success = 2
const CMP_RESULT = 0x08; // Compare.result = 1
const CMP_TARGET = 0x10; // Compare.target = 2
const CMP_KEY = 0x1a; // Compare.key = 3
const CMP_CREATE = 0x28; // Compare.create_revision = 5
const CMP_MOD = 0x30; // Compare.mod_revision = 6
const CMP_VALUE = 0x3a; // Compare.value = 7
const OP_PUT = 0x12; // RequestOp.request_put = 2
const OP_DELETE = 0x1a; // RequestOp.request_delete_range = 3
const PUT_KEY = 0x0a; // PutRequest.key = 1 (DeleteRangeRequest.key = 1 too)
const PUT_VALUE = 0x12; // PutRequest.value = 2
const TARGETS = { Create: 1, Mod: 2, Value: 3 } as const;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** a length-delimited field: tag, length, body */
function fieldSize(body: number): number {
  return 1 + varintSize(body) + body;
}

interface CompareParts {
  target: 1 | 2 | 3;
  key: Buffer;
  rev: number;
  value: Buffer | undefined;
  size: number;
}

function compareParts(c: ICompare): CompareParts {
  const target = TARGETS[c.target as keyof typeof TARGETS];
  if (!target || (c.result !== undefined && c.result !== 'Equal') || !c.key)
    throw new Error(`txn codec: unsupported compare ${String(c.target)} ${String(c.result)}`);
  const rev = Number(target === 1 ? c.create_revision : c.mod_revision) || 0;
  const value = target === 3 ? (c.value ?? Buffer.alloc(0)) : undefined;
  // result and target are always written (as protobufjs writes set fields, zero included)
  let size = 2 + 2 + fieldSize(c.key.length);
  size += value ? fieldSize(value.length) : 1 + varintSize(rev);
  return { target, key: c.key, rev, value, size };
}

function opSize(op: TxnOp): { body: number; valueLen: number } {
  const keyField = fieldSize(op.key.length);
  if (op.value === undefined) return { body: keyField, valueLen: 0 };
  const valueLen = typeof op.value === 'string' ? Buffer.byteLength(op.value) : op.value.length;
  return { body: keyField + fieldSize(valueLen), valueLen };
}

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  byte(b: number): void {
    this.buf[this.pos++] = b;
  }
  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }
  bytes(tag: number, b: Buffer): void {
    this.byte(tag);
    this.varint(b.length);
    this.pos += b.copy(this.buf, this.pos);
  }
}

/** The TxnRequest bytes of compares and success ops (no failure branch). */
export function encodeTxn(compares: readonly ICompare[], ops: readonly TxnOp[]): Buffer {
  const cmps = compares.map(compareParts);
  const sizes = ops.map(opSize);
  let total = 0;
  for (const c of cmps) total += fieldSize(c.size);
  for (const s of sizes) total += fieldSize(fieldSize(s.body));
  const w = new Writer(Buffer.allocUnsafe(total));
  for (const c of cmps) {
    w.byte(TXN_COMPARE);
    w.varint(c.size);
    w.byte(CMP_RESULT);
    w.byte(0); // Equal
    w.byte(CMP_TARGET);
    w.byte(c.target);
    w.bytes(CMP_KEY, c.key);
    if (c.value) w.bytes(CMP_VALUE, c.value);
    else {
      w.byte(c.target === 1 ? CMP_CREATE : CMP_MOD);
      w.varint(c.rev);
    }
  }
  ops.forEach((op, i) => {
    const { body, valueLen } = sizes[i]!;
    w.byte(TXN_SUCCESS);
    w.varint(fieldSize(body));
    w.byte(op.value === undefined ? OP_DELETE : OP_PUT);
    w.varint(body);
    w.bytes(PUT_KEY, op.key);
    if (op.value === undefined) return;
    w.byte(PUT_VALUE);
    w.varint(valueLen);
    w.pos += typeof op.value === 'string' ? w.buf.write(op.value, w.pos) : op.value.copy(w.buf, w.pos);
  });
  if (w.pos !== total) throw new Error(`txn codec: wrote ${w.pos} of ${total} bytes`);
  return w.buf;
}

/** Reads protobuf fields of buf[start, end), calling on(field, wire type, value or body start). */
class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('txn codec: truncated varint');
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 128;
    }
  }
  /** skips a field's value of the given wire type */
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) {
      const len = this.varint(); // (read before pos: `pos += varint()` would add to the old pos)
      this.pos += len;
    } else if (wire === 5) this.pos += 4;
    else throw new Error(`txn codec: unsupported wire type ${wire}`);
    if (this.pos > this.end) throw new Error('txn codec: truncated field');
  }
}

/** header.revision and succeeded of TxnResponse bytes; the per-operation responses are skipped. */
export function decodeTxnAnswer(buf: Uint8Array): TxnAnswer {
  const r = new Reader(buf, 0, buf.length);
  let revision = 0;
  let succeeded = false;
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) revision = headerRevision(r);
    else if (field === 2 && wire === 0) succeeded = r.varint() !== 0;
    else r.skip(wire);
  }
  return { revision, succeeded };
}

/** ResponseHeader.revision (field 3) of the header whose length prefix r is at. */
function headerRevision(r: Reader): number {
  const len = r.varint();
  const h = new Reader(r.buf, r.pos, r.pos + len);
  if (h.end > r.end) throw new Error('txn codec: truncated header');
  let revision = 0;
  while (h.pos < h.end) {
    const tag = h.varint();
    if (tag === 0x18) revision = h.varint();
    else h.skip(tag & 7);
  }
  r.pos = h.end;
  return revision;
}
