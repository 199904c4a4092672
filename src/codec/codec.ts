/**
 * JSON, YAML, Protobuf and CBOR encoding of objects and lists. Runs in the actors, except YAML
 * replies to resource requests, which the front thread encodes in slices (http/yaml-reply.ts).
 */
import { errors } from '../api/status.js';
import type { TypeMeta } from '../api/object.js';
import { parseJsonNoting, parseYamlNoting, type Duplicate } from './duplicates.js';
import type { Body, Encoding } from './types.js';
import { ENVELOPE_CLOSE, ProtobufCodec, PROTOBUF_MEDIA_TYPE } from './protobuf.js';
import { fieldLength, writeField } from './protobuf/wire.js';
import { ownedBuffer } from './buffer-pool.js';
import { settled, slabAlloc } from './item-slabs.js';
import { takeInto } from './protobuf/wire-writer.js';
import { configureHelper, prestartHelper, SHARE_MIN, START_MIN, shareEncoding } from './protobuf/encode-helper.js';
import { goJsonSyntaxError, summarizeData } from './go-json.js';
import { toYaml } from './yaml-encoder.js';
import { CBOR_MEDIA_TYPE, SELF_DESCRIBED, cborList, decodeCbor, encodeCbor, encodeCborItem } from './cbor.js';
import { stringifyValue } from '../schema/deep-value.js';

export const JSON_TYPE = 'application/json';
/** A list's type meta and metadata. */
type ListHead = { kind: string; apiVersion: string; metadata: object };
export const YAML_TYPE = 'application/yaml';

let protobuf: ProtobufCodec | undefined;
let protobufDomain: string | undefined;
/** Sets the API domain the worker's Protobuf codec maps group names from (before first use). */
export function configureProtobuf(apiDomain: string): void {
  protobufDomain = apiDomain;
  configureHelper(apiDomain);
}
/** The worker's Protobuf codec, compiled on first use. */
export function protobufCodec(): ProtobufCodec {
  return (protobuf ??= new ProtobufCodec(undefined, protobufDomain ? { apiDomain: protobufDomain } : {}));
}

/**
 * The 400 of a JSON or YAML body that does not parse, in upstream's words (the serializer's
 * error wrapped by transformDecodeError when the expected kind is known).
 */
function undecodable(body: Body, e: unknown, kind: string | undefined): Error {
  const bytes = Buffer.from(body.text, 'utf8');
  let why: string;
  if (body.contentType === 'yaml') {
    const m = /^(.*?)(?: at line (\d+), column \d+)?:?$/.exec((e as Error).message.split('\n')[0]!.trim());
    const text = m?.[1] ?? (e as Error).message;
    const line = m?.[2] ?? String((e as { linePos?: { line: number }[] }).linePos?.[0]?.line ?? 1);
    why = `error converting YAML to JSON: yaml: line ${line}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
  } else {
    why = `couldn't get version/kind; json parse error: ${goJsonSyntaxError(bytes) ?? (e as Error).message}`;
  }
  return errors.badRequest(
    kind ? `the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeData(bytes)})` : why,
  );
}

/** Collections this large get the actor's Protobuf schema and the list helper thread ahead of their first Protobuf list. */
export const WARM_AT = START_MIN;
let warmed = false;
/**
 * Called when a collection of the actor reaches WARM_AT entries (storage/cacher/type-cache.ts):
 * starts the helper thread that shares a large list's first encoding (protobuf/encode-helper.ts;
 * it loads its own schema) and loads the actor's schema in idle time (≈ 150–200 ms once),
 * so that neither is in the collection's first Protobuf list. Once per thread.
 */
export function warmProtobuf(): void {
  if (warmed) return;
  warmed = true;
  prestartHelper();
  setTimeout(() => protobufCodec().typeFor('', 'v1', 'Pod'), 0).unref();
}

/**
 * Decodes a request body into an object; malformed input is a 400 in upstream's wording
 * (`kind`, the kind the endpoint expects, completes it). A repeated key keeps its last value
 * and, when `found` is given, is noted there.
 */
export function decodeBody(body: Body, found?: Duplicate[], kind?: string): any {
  let obj: unknown;
  if (body.contentType === 'protobuf') {
    try {
      return protobufCodec().decodeObject(body.bytes ?? new Uint8Array());
    } catch (e) {
      throw errors.badRequest(`error decoding protobuf: ${(e as Error).message}`);
    }
  }
  if (body.contentType === 'cbor') {
    try {
      obj = decodeCbor(body.bytes ?? new Uint8Array());
    } catch (e) {
      throw errors.badRequest(`error decoding cbor: ${(e as Error).message}`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
      throw errors.badRequest("Object 'Kind' is missing in CBOR data");
    return obj;
  }
  try {
    obj = body.contentType === 'yaml' ? parseYamlNoting(body.text, found) : parseJsonNoting(body.text, found);
  } catch (e) {
    throw undecodable(body, e, kind);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw errors.badRequest(`Object 'Kind' is missing in '${body.text.slice(0, 100)}'`);
  }
  return obj;
}

/** The response Content-Type; a view names itself in parameters (`application/json;as=Table;g=…;v=…`). */
export function contentTypeOf(enc: Encoding): string {
  const base =
    enc.format === 'yaml'
      ? YAML_TYPE
      : enc.format === 'protobuf'
        ? (enc.mediaType ?? PROTOBUF_MEDIA_TYPE)
        : enc.format === 'cbor'
          ? CBOR_MEDIA_TYPE
          : JSON_TYPE;
  if (enc.view) {
    const [g, v] = enc.view.groupVersion.split('/');
    return `${base};as=${enc.view.as};g=${g};v=${v}`;
  }
  return base;
}

/**
 * Encodes a value; the JSON fast path reuses an already-encoded string when given one. As
 * upstream's JSON serializer: a compact body ends with a newline (json.Encoder), a pretty one
 * does not (json.MarshalIndent). `json + '\n'` is a V8 cons string: no copy of the body here.
 */
export function encode(value: unknown, enc: Encoding, json?: string): string | Uint8Array {
  if (enc.format === 'protobuf') return protobufCodec().encodeObject(json !== undefined ? JSON.parse(json) : value);
  if (enc.format === 'cbor') return encodeCbor(json !== undefined ? JSON.parse(json) : value);
  if (enc.format === 'yaml') return toYaml(json !== undefined ? JSON.parse(json) : value);
  if (enc.pretty) return stringifyValue(json !== undefined ? JSON.parse(json) : value, 2);
  return (json ?? stringifyValue(value)) + '\n';
}

/** A list body built from already-encoded items, so each object is encoded once. */
export function encodeList(head: ListHead, itemJson: string[], enc: Encoding): string | Uint8Array {
  const json = `{"kind":${JSON.stringify(head.kind)},"apiVersion":${JSON.stringify(head.apiVersion)},"metadata":${JSON.stringify(head.metadata)},"items":[${itemJson.join(',')}]}`;
  return enc.format === 'json' && !enc.pretty ? json + '\n' : encode(undefined, enc, json);
}

/**
 * A stored object as list encodings see it. Entries are immutable per version. JSON lists copy
 * each entry's JSON string straight into the body (its UTF-8 length measured once, `jsonBytes`):
 * no second copy of the JSON is kept as bytes. The bare item bytes of each binary encoding are
 * computed on first use and kept on the entry (`encoded`), keyed by format and apiVersion, each
 * in a buffer of its exact size: a LIST in Protobuf or CBOR encodes each object once, not on
 * every request.
 */
export interface Encodable {
  json: string;
  /** the stored object (kind and apiVersion set by the store) */
  obj: TypeMeta;
  /** obj.apiVersion when the entry keeps it apart (cache entries do: reading it parses no object) */
  apiVersion?: string;
  encoded?: Record<string, Uint8Array>;
  /** UTF-8 length of json, measured on the entry's first JSON list */
  jsonBytes?: number;
  /** the object for one encoding, not kept by the entry (cache entries: CachedEntry.objOnce); else `obj` */
  objOnce?(): TypeMeta;
}

/** The apiVersion an entry is stored in. */
function storedVersion(e: Encodable): string | undefined {
  return e.apiVersion ?? e.obj.apiVersion;
}

/**
 * An entry's bare item bytes in `format` as apiVersion, encoded on first use and kept. `list`:
 * for a LIST, whose items are written into shared slabs (item-slabs.ts: no buffer per item) and
 * whose kept bytes leave a sparse slab; a single object's bytes (GET, watch) get a buffer of their own.
 */
function itemBytes(e: Encodable, format: 'protobuf' | 'cbor', apiVersion: string, list = false): Uint8Array {
  const key = keyOf(format, apiVersion);
  const kept = e.encoded?.[key];
  if (kept) {
    if (!list) return kept;
    const moved = settled(kept);
    if (moved !== kept) e.encoded![key] = moved;
    return moved;
  }
  let bytes: Uint8Array;
  // a LIST's messages go to slabs: its callers encode under takeInto(slabAlloc) (protobufItems)
  if (format === 'protobuf') bytes = protobufMessage(e, apiVersion);
  else {
    // CBOR's encoder answers a slice of a shared 8 KiB pool slab, which would pin the slab whole
    // (8 KiB per entry measured, bench/density-memory.ts): copied into a buffer of its own
    bytes = new Uint8Array(encodeCborItem(objectAs(e, apiVersion)));
  }
  (e.encoded ??= {})[key] = bytes;
  return bytes;
}

const keys = new Map<string, string>();
/** The `encoded` key of a format and apiVersion: one string per pair (no concatenation per entry). */
function keyOf(format: string, apiVersion: string): string {
  const pair = format === 'protobuf' ? apiVersion : `${format}\u0000${apiVersion}`;
  let key = keys.get(pair);
  if (key === undefined) keys.set(pair, (key = `${format}|${apiVersion}`));
  return key;
}

/** The `encoded` key of Protobuf item bytes as apiVersion (protobuf/encode-ahead.ts keeps them as a list would). */
export const protobufKey = (apiVersion: string): string => keyOf('protobuf', apiVersion);

/** The entry's bare Protobuf message: from the JSON text when it can (no parse, no garbage: protobuf/text-encoder.ts). */
function protobufMessage(e: Encodable, apiVersion: string): Uint8Array {
  const c = protobufCodec();
  return c.encodeJsonText(e.json, apiVersion, isAscii(e)) ?? c.encodeMessage(objectAs(e, apiVersion));
}
/** An entry's JSON known to be ASCII: its UTF-8 length (measured by a JSON list) is its length. */
const isAscii = (e: Encodable): boolean => e.jsonBytes === e.json.length;

/** The stored object as apiVersion, parsed for one use (not kept by a cache entry). */
function objectAs(e: Encodable, apiVersion: string): TypeMeta {
  const stored = e.objOnce ? e.objOnce() : e.obj;
  return stored.apiVersion === apiVersion ? stored : { ...stored, apiVersion };
}

/** A list body from entries: JSON joins their item bytes, Protobuf and CBOR their cached item bytes. */
export function encodeEntries(head: ListHead, entries: Encodable[], enc: Encoding): string | Uint8Array {
  if (enc.format === 'protobuf') return protobufListBody(head, protobufItems(entries, head.apiVersion));
  if (enc.format === 'cbor')
    return cborList(
      head,
      entries.map((e) => itemBytes(e, 'cbor', head.apiVersion)),
    );
  // YAML and pretty JSON re-encode the joined JSON (resource replies in these are encoded off the actor: http/yaml-reply.ts)
  if (enc.pretty || enc.format === 'yaml') {
    const items = entries.map((e) =>
      storedVersion(e) === head.apiVersion ? e.json : stringifyValue({ ...e.obj, apiVersion: head.apiVersion }),
    );
    return encodeList(head, items, enc);
  }
  const open = `{"kind":${JSON.stringify(head.kind)},"apiVersion":${JSON.stringify(head.apiVersion)},"metadata":${JSON.stringify(head.metadata)},"items":[`;
  return joinJson(open, entries, head.apiVersion, ']}\n');
}

/**
 * head + the entries' JSON (as apiVersion; undefined: as stored) joined by commas + tail, in one
 * exactly sized buffer of its own (`owned`): a JSON LIST is selection plus one copy of each
 * item's JSON string into the body, with no re-encoding and no JSON kept twice per entry.
 * Another apiVersion is encoded each time.
 */
export function joinJson(
  head: string,
  entries: readonly Encodable[],
  apiVersion: string | undefined,
  tail: string,
): Uint8Array {
  const other = apiVersion === undefined ? undefined : converted(entries, apiVersion);
  let total = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, entries.length - 1);
  for (let i = 0; i < entries.length; i++)
    total += other?.[i] !== undefined ? Buffer.byteLength(other[i]!) : jsonBytes(entries[i]!);
  // its own buffer (never the shared pool; a reused one when large), not zero-filled: every byte is written below
  const out = ownedBuffer(total);
  let at = out.write(head, 0);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ','
    const s = other?.[i];
    at += s !== undefined ? out.write(s, at) : writeJson(out, at, entries[i]!);
  }
  out.write(tail, at);
  owned.add(out.buffer);
  return new Uint8Array(out.buffer, 0, total);
}

/** The JSON of entries not stored as apiVersion (undefined where one is); undefined when none. */
function converted(entries: readonly Encodable[], apiVersion: string): (string | undefined)[] | undefined {
  let out: (string | undefined)[] | undefined;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (storedVersion(e) === apiVersion) continue;
    (out ??= new Array<string | undefined>(entries.length))[i] = stringifyValue({ ...e.obj, apiVersion });
  }
  return out;
}

/** An entry's JSON as UTF-8: its length, measured once. */
export function jsonBytes(e: Encodable): number {
  return (e.jsonBytes ??= Buffer.byteLength(e.json));
}

/** Writes an entry's JSON at `at`; answers the bytes written. ASCII JSON (the usual case) is a plain byte copy. */
function writeJson(out: Buffer, at: number, e: Encodable): number {
  const n = jsonBytes(e);
  return n === e.json.length ? out.write(e.json, at, n, 'latin1') : out.write(e.json, at, n, 'utf8');
}

/** head + items joined by commas + tail, in one exactly sized buffer of its own (`owned`). */
export function joinItems(head: string, items: Uint8Array[], tail: string): Uint8Array {
  let total = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, items.length - 1);
  for (const b of items) total += b.byteLength;
  // its own buffer (never the shared pool; a reused one when large), not zero-filled: every byte is written below
  const out = ownedBuffer(total);
  let at = out.write(head, 0);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ','
    out.set(items[i]!, at);
    at += items[i]!.byteLength;
  }
  out.write(tail, at);
  owned.add(out.buffer);
  return new Uint8Array(out.buffer, 0, total);
}

/**
 * Bodies built for one reply in a buffer of their own (joinJson, joinItems): the actor transfers
 * their buffers to the front thread as they are, with no copy (actors/pack.ts). Only buffers
 * nothing else references are in it.
 */
export const owned = new WeakSet<ArrayBufferLike>();

/** The entries' cached bare Protobuf messages as apiVersion (encoded on first use). */
export function protobufItems(entries: Encodable[], apiVersion: string): Uint8Array[] {
  return takeInto(slabAlloc, () => {
    shareOut(entries, apiVersion);
    return entries.map((e) => itemBytes(e, 'protobuf', apiVersion, true));
  });
}

/** The size of the entries' `items` fields in a Protobuf list: what its envelope's length counts before the items are written. */
export function protobufFieldsSize(entries: Iterable<Encodable>, apiVersion: string): number {
  return takeInto(slabAlloc, () => {
    const all = Array.isArray(entries) ? (entries as Encodable[]) : [...entries];
    shareOut(all, apiVersion);
    let size = 0;
    for (const e of all) size += fieldLength(itemBytes(e, 'protobuf', apiVersion, true).byteLength);
    return size;
  });
}

/**
 * The first encoding of a large list's missing items, shared with a helper thread
 * (protobuf/encode-helper.ts; the same bytes); the callers' in-order pass then reads them kept.
 */
function shareOut(entries: readonly Encodable[], apiVersion: string): void {
  if (entries.length < SHARE_MIN) return;
  const key = keyOf('protobuf', apiVersion);
  const missing = entries.filter((e) => e.encoded?.[key] === undefined);
  if (missing.length < SHARE_MIN) return;
  shareEncoding({
    apiVersion,
    count: missing.length,
    text: (i) => missing[i]!.json,
    ascii: (i) => isAscii(missing[i]!),
    here: (i) => itemBytes(missing[i]!, 'protobuf', apiVersion, true),
    keep: (i, bytes) => ((missing[i]!.encoded ??= {})[key] = bytes),
  });
}

/** A whole Protobuf list body, written once into a buffer of its own (`owned`: transferred without a copy). */
function protobufListBody(head: ListHead, items: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const b of items) size += fieldLength(b.byteLength);
  const { open, tag } = protobufCodec().listOpening(head, size);
  return joinFields(open, tag, items, ENVELOPE_CLOSE);
}

/**
 * The opening bytes of a Protobuf list sized for all its items, for a streamed LIST's first
 * page; the stream ends with ENVELOPE_CLOSE (protobufListClose).
 */
export function protobufListOpening(head: ListHead, itemFieldsSize: number): { open: Uint8Array; tag: number } {
  return protobufCodec().listOpening(head, itemFieldsSize);
}

export const protobufListClose: Readonly<Uint8Array> = ENVELOPE_CLOSE;

/** open + one length-delimited field (tag) per item + close, in one exactly sized buffer of its own (`owned`). */
export function joinFields(open: Uint8Array, tag: number, items: Uint8Array[], close: Uint8Array): Uint8Array {
  let total = open.byteLength + close.byteLength;
  for (const b of items) total += fieldLength(b.byteLength);
  const out = ownedBuffer(total);
  out.set(open);
  let at = open.byteLength;
  for (const b of items) at = writeField(out, at, tag, b);
  out.set(close, at);
  owned.add(out.buffer);
  return new Uint8Array(out.buffer, 0, total);
}

/** One stored object in a binary encoding from its cached item bytes (get replies, watch events); kind: the caller's, saving a cached entry a parse. */
export function encodeEntry(e: Encodable, enc: Encoding, apiVersion: string, kind?: string): Uint8Array {
  if (enc.format === 'protobuf')
    return protobufCodec().envelope(apiVersion, kind ?? e.obj.kind ?? '', itemBytes(e, 'protobuf', apiVersion));
  const item = itemBytes(e, 'cbor', apiVersion);
  const out = new Uint8Array(item.length + 3);
  out.set(SELF_DESCRIBED);
  out.set(item, 3);
  return out;
}
