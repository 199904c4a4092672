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
import { Encoder } from 'cbor-x';

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
export const APPLY_PATCH_CBOR = 'application/apply-patch+cbor';
/** The self-described CBOR tag 55799 as it precedes a data item. */
export const SELF_DESCRIBED: Readonly<Uint8Array> = Uint8Array.of(0xd9, 0xd9, 0xf7);

export class CborDecodeError extends Error {}

// records and structured clones are cbor-x extensions other decoders do not read
const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true, structuredClone: false });

/** One self-described data item. */
export function encodeCbor(value: unknown): Uint8Array {
  const item = encoder.encode(value);
  const out = new Uint8Array(item.length + 3);
  out.set(SELF_DESCRIBED);
  out.set(item, 3);
  return out;
}

/** Exactly one data item (the self-described tag is optional) → its JSON data model. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new CborDecodeError('cbor: empty body');
  try {
    return toJsonModel(encoder.decode(bytes), 0);
  } catch (e) {
    if (e instanceof CborDecodeError) throw e;
    throw new CborDecodeError(`cbor: ${(e as Error).message}`);
  }
}

/** Refuses what JSON cannot carry (byte strings, undefined, other tags) so decoding is lossless. */
function toJsonModel(v: unknown, depth: number): unknown {
  if (depth > 10_000) throw new CborDecodeError('cbor: nesting too deep');
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new CborDecodeError('cbor: non-finite number');
    return v;
  }
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new CborDecodeError('cbor: integer out of range');
    return Number(v);
  }
  if (Array.isArray(v)) return v.map((x) => toJsonModel(x, depth + 1));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = toJsonModel(x, depth + 1);
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
