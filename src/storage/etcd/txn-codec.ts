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
import { Reader } from './proto-reader.js';

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

/** header.revision and succeeded of TxnResponse bytes; the per-operation responses are skipped. */
export function decodeTxnAnswer(buf: Uint8Array): TxnAnswer {
  const r = new Reader(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength), 0, buf.byteLength);
  let revision = 0;
  let succeeded = false;
  while (r.pos < r.end) {
    const tag = r.small();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2)
      r.fields((h, f, w) => {
        // ResponseHeader.revision (field 3)
        if (f === 3 && w === 0) revision = Number(h.int64());
        else h.skip(w);
      });
    else if (field === 2 && wire === 0) succeeded = r.small() !== 0;
    else r.skip(wire);
  }
  return { revision, succeeded };
}
