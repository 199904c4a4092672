/**
 * CBOR encoding (`application/cbor`, alpha, feature gate CBORServingAndStorage) with cbor-x.
 * A leaf module, used by the actors (bodies, watch events) and, for apply patches, the front
 * thread.
 *
 * Every body is one data item prefixed with the self-described CBOR tag 55799 (`d9 d9 f7`), as
 * upstream's serializer writes it; decoding accepts the item with or without the tag and refuses
 * trailing data. Objects are encoded from their JSON data model (maps with text keys, text
 * strings, integers or float64, arrays, booleans, null): `bytes` fields stay base64 text, as
 * in JSON.
 */
import { Decoder, Encoder, addExtension } from 'cbor-x';
import { MAX_NESTING_DEPTH } from '../schema/depth.js';
import { encodeCborIterative } from './cbor-deep.js';
import { setOwn } from '../api/own-keys.js';
import { CborMapKeyError, plainObjects, scanMapKeys } from './cbor-maps.js';

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
export const APPLY_PATCH_CBOR = 'application/apply-patch+cbor';
/** The self-described CBOR tag 55799 as it precedes a data item. */
export const SELF_DESCRIBED: Readonly<Uint8Array> = Uint8Array.of(0xd9, 0xd9, 0xf7);

export class CborDecodeError extends Error {}

/**
 * Bignums (tags 2 and 3) are refused, as upstream's decoder does (BignumTagForbidden): the JSON
 * data model cannot carry them, and cbor-x builds the BigInt a byte at a time, quadratic in
 * the length (a 64 KiB bignum took seconds). The tag's byte string is read (linear) before this runs.
 */
for (const tag of [2, 3])
  addExtension({
    tag,
    decode: () => {
      throw new CborDecodeError(`cbor: bignum (tag ${tag}) is not allowed`);
    },
  } as never);

// records and structured clones are cbor-x extensions other decoders do not read
const encoder = new Encoder({
  useRecords: false,
  mapsAsObjects: true,
  tagUint8Array: false,
  variableMapSize: true,
  structuredClone: false,
});
/** maps as Maps: keys exactly as sent (see src/codec/cbor-maps.ts) */
const mapDecoder = new Decoder({ useRecords: false, mapsAsObjects: false, structuredClone: false });

/** One self-described data item. */
export function encodeCbor(value: unknown): Uint8Array {
  const item = encodeCborItem(value);
  const out = new Uint8Array(item.length + 3);
  out.set(SELF_DESCRIBED);
  out.set(item, 3);
  return out;
}

/** One data item without the tag: a list item, encoded once and reused (see cborList). */
export function encodeCborItem(value: unknown): Uint8Array {
  try {
    return encoder.encode(value);
  } catch (e) {
    // nested too deep for cbor-x's recursion: only an object stored by an older version
    if (!(e instanceof RangeError)) throw e;
    return encodeCborIterative(value);
  }
}

/** A self-described list map {kind, apiVersion, metadata, items: [...]} around already-encoded items. */
export function cborList(
  head: { kind: string; apiVersion: string; metadata: object },
  items: Uint8Array[],
): Uint8Array {
  const shell = encoder.encode({ kind: head.kind, apiVersion: head.apiVersion, metadata: head.metadata, items: null });
  // the shell ends with the null (f6) of items: replaced by an array header and the items
  const n = items.length;
  const arrayHead =
    n < 24
      ? [0x80 + n]
      : n < 0x100
        ? [0x98, n]
        : n < 0x10000
          ? [0x99, n >> 8, n & 0xff]
          : [0x9a, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  let size = 3 + shell.length - 1 + arrayHead.length;
  for (const it of items) size += it.length;
  const out = new Uint8Array(size);
  out.set(SELF_DESCRIBED);
  let at = 3;
  out.set(shell.subarray(0, shell.length - 1), at);
  at += shell.length - 1;
  out.set(arrayHead, at);
  at += arrayHead.length;
  for (const it of items) {
    out.set(it, at);
    at += it.length;
  }
  return out;
}

/** Exactly one data item (the self-described tag is optional) → its JSON data model. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new CborDecodeError('cbor: empty body');
  try {
    const decoded = encoder.decode(bytes);
    // after the decode, so an item that is not well-formed keeps the decoder's error
    const keys = scanMapKeys(bytes);
    return toJsonModel(keys.needsMaps ? plainObjects(mapDecoder.decode(bytes)) : decoded, 1);
  } catch (e) {
    if (e instanceof CborDecodeError) throw e;
    if (e instanceof CborMapKeyError) throw new CborDecodeError(e.message);
    throw new CborDecodeError(`cbor: ${(e as Error).message}`);
  }
}

/**
 * Refuses what JSON cannot carry (byte strings, undefined, other tags) so decoding is lossless,
 * and arrays and maps nested deeper than MAX_NESTING_DEPTH (`level`: that of `v`, the whole item
 * being 1), the one limit of every encoding; the wording is that of upstream's CBOR decoder.
 */
function toJsonModel(v: unknown, level: number): unknown {
  if (v !== null && typeof v === 'object' && level > MAX_NESTING_DEPTH)
    throw new CborDecodeError(`cbor: exceeded max nested level ${MAX_NESTING_DEPTH}`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new CborDecodeError('cbor: non-finite number');
    return v;
  }
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      throw new CborDecodeError('cbor: integer out of range');
    return Number(v);
  }
  if (Array.isArray(v)) return v.map((x) => toJsonModel(x, level + 1));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) setOwn(out, k, toJsonModel(x, level + 1));
    return out;
  }
  throw new CborDecodeError(`cbor: unsupported data item (${Object.prototype.toString.call(v)})`);
}

/**
 * One entry of a watch event sequence (`application/cbor-seq`): a self-described map
 * {type, object} whose object is the object's own (self-described) data item, inserted as is
 * so an event reuses the object's bytes.
 */
export function cborWatchEvent(type: string, object: Uint8Array): Uint8Array {
  const head = encoder.encode({ type, object: null });
  // head is a2 <"type"> <type> <"object"> f6: replace the trailing null with the object's item
  const out = new Uint8Array(3 + head.length - 1 + object.length);
  out.set(SELF_DESCRIBED);
  out.set(head.subarray(0, head.length - 1), 3);
  out.set(object, 3 + head.length - 1);
  return out;
}
