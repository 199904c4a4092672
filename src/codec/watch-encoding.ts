/**
 * Watch stream encodings: the response Content-Type, the encoded object of one event and its
 * framing, for JSON (one event per line), Protobuf (length-prefixed frames) and CBOR
 * (`application/cbor-seq`). The same functions serve the actors (initial events, live events
 * for the encodings the front thread asks for) and the front thread's rare fallbacks, so an
 * event's object is encoded once per encoding wherever that happens.
 *
 * Protobuf framing, as upstream (codec_factory.go: StreamSerializer = protobuf.NewRawSerializer,
 * Framer = LengthDelimitedFramer): a 4-byte big-endian length, then a bare `metav1.WatchEvent`
 * {type = 1, object = 2 (RawExtension {raw = 1})} whose raw holds the complete enveloped object
 * (magic + Unknown). Written by hand here: two length-delimited fields need no protobufjs.
 */
import type { Encoding } from './types.js';
import { encodeCbor, cborWatchEvent, CBOR_SEQ_MEDIA_TYPE } from './cbor.js';
import { encodeEntry, protobufCodec, type Encodable } from './codec.js';
import { partialObjectMetadata, toTable } from './table.js';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.js';
import { fieldLength, varintLength, writeField, writeVarint } from './protobuf/wire.js';
import { stringifyValue } from '../schema/deep-value.js';
import { fieldAt } from '../api/object.js';

export type Chunk = string | Uint8Array;

/** A stable key per distinct stream encoding (watchers sharing it share encoded events). */
export function streamKey(enc: Encoding): string {
  const v = enc.view;
  return v ? `${enc.format}|${v.as}|${v.groupVersion}|${v.includeObject}` : enc.format;
}

/** Whether this stream encoding carries objects as bytes (Protobuf, CBOR) rather than JSON text. */
export function isBinaryStream(enc: Encoding): boolean {
  return enc.format === 'protobuf' || enc.format === 'cbor';
}

/** Content-Type of a watch response (upstream: JSON as is, other types with `;stream=watch`). */
export function watchContentType(enc: Encoding): string {
  if (enc.format === 'protobuf') return `${enc.mediaType ?? PROTOBUF_MEDIA_TYPE};stream=watch`;
  if (enc.format === 'cbor') return CBOR_SEQ_MEDIA_TYPE;
  return 'application/json';
}

export interface EventObject {
  kind: string;
  /** the object's JSON, as stored and delivered */
  json: string;
  /** the parsed object when the caller has it (saves a parse) */
  obj?: unknown;
  /** the stored entry when `json` is its JSON: binary encodings reuse its cached item bytes */
  entry?: Encodable;
}

/**
 * The event's object in the stream encoding: the object itself, or its server-side view (a
 * one-row Table; `headers` false leaves columnDefinitions null, as upstream does for every
 * watch event after the first; or PartialObjectMetadata).
 */
export function encodeEventObject(enc: Encoding, o: EventObject, now: number, headers = true): Chunk {
  if (!enc.view && enc.format === 'json') return o.json;
  if (!enc.view && o.entry && isBinaryStream(enc))
    return encodeEntry(o.entry, enc, o.entry.apiVersion ?? o.entry.obj.apiVersion ?? '');
  const obj: unknown = o.obj ?? JSON.parse(o.json);
  const view = enc.view;
  if (view?.as === 'Table') {
    const table = toTable(
      o.kind,
      [obj],
      { resourceVersion: fieldAt(obj, 'metadata', 'resourceVersion') },
      view.groupVersion,
      view.includeObject,
      now,
    );
    return encodeValue(enc, headers ? table : { ...table, columnDefinitions: null });
  }
  return encodeValue(enc, view ? partialObjectMetadata(obj, view.groupVersion) : obj);
}

/**
 * The object of a BOOKMARK event: the watched kind with only metadata.resourceVersion (and the
 * initial-events-end annotation); in a view, an empty Table or a PartialObjectMetadata.
 */
export function bookmarkObject(
  view: Encoding['view'],
  kind: string,
  apiVersion: string,
  rv: number,
  annotations?: Record<string, string>,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  if (view?.as === 'Table')
    return {
      kind: 'Table',
      apiVersion: view.groupVersion,
      metadata: { resourceVersion: String(rv) },
      columnDefinitions: null,
      rows: [],
    };
  if (view) return { kind: 'PartialObjectMetadata', apiVersion: view.groupVersion, metadata };
  return { kind, apiVersion, metadata };
}

/** A bookmark or error object (kind, apiVersion, metadata only) in the stream encoding. */
export function encodeValue(enc: Encoding, value: unknown): Chunk {
  if (enc.format === 'protobuf') return protobufCodec().encodeObject(value);
  if (enc.format === 'cbor') return encodeCbor(value);
  return stringifyValue(value);
}

/** One framed event of the stream around an already-encoded object. */
export function frameEvent(enc: Encoding, type: string, object: Chunk): Chunk {
  if (enc.format === 'protobuf') return protobufWatchFrame(type, object as Uint8Array);
  if (enc.format === 'cbor') return cborWatchEvent(type, object as Uint8Array);
  return `{"type":"${type}","object":${object as string}}\n`;
}

/**
 * frameEvent as bytes (what a socket is handed). A JSON frame is written straight into its
 * buffer: no joined string of the object's size to flatten and drop, which was most of the
 * young-generation garbage the watch hub made per event on the front thread.
 */
export function frameEventBytes(enc: Encoding, type: string, object: Chunk): Uint8Array {
  if (enc.format === 'protobuf' || enc.format === 'cbor' || typeof object !== 'string') {
    const framed = frameEvent(enc, type, object);
    return typeof framed === 'string' ? Buffer.from(framed) : framed;
  }
  // event types are ASCII: one byte per character
  const head = `{"type":"${type}","object":`;
  const n = Buffer.byteLength(object);
  const out = Buffer.allocUnsafe(head.length + n + 2);
  out.write(head, 0, 'latin1');
  out.write(object, head.length, 'utf8');
  out[head.length + n] = 0x7d; // }
  out[head.length + n + 1] = 0x0a; // \n
  return out;
}

/** Joins chunks of one stream (all text or all bytes) into one write. */
export function joinChunks(chunks: Chunk[]): Chunk {
  if (chunks.length === 1) return chunks[0]!;
  if (chunks.length === 0 || typeof chunks[0] === 'string') return (chunks as string[]).join('');
  return Buffer.concat(chunks as Uint8Array[]);
}

export function chunkLength(c: Chunk): number {
  return typeof c === 'string' ? c.length : c.byteLength;
}

const textEncoder = new TextEncoder();

/** 4-byte big-endian length + WatchEvent{type, object: RawExtension{raw}}. */
export function protobufWatchFrame(type: string, raw: Uint8Array): Uint8Array {
  const t = textEncoder.encode(type);
  const ext = fieldLength(raw.length);
  const msg = fieldLength(t.length) + 1 + varintLength(ext) + ext;
  const out = new Uint8Array(4 + msg);
  new DataView(out.buffer).setUint32(0, msg, false);
  let at = writeField(out, 4, 0x0a, t);
  out[at++] = 0x12;
  at = writeVarint(out, at, ext);
  writeField(out, at, 0x0a, raw);
  return out;
}
