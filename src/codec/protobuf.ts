/**
 * Protobuf encoding of built-in objects (`application/vnd.<product>.protobuf`). A leaf module
 * for the actors' worker threads: the descriptor and OpenAPI document are read and compiled
 * once, on first use.
 *
 * Wire format, as upstream apimachinery's protobuf serializer:
 * - an object body is the magic `6b 38 73 00` ("k8s\0") followed by `runtime.Unknown`
 *   {typeMeta{apiVersion, kind}, raw = the kind's message, contentEncoding "", contentType ""};
 * - a watch stream (`;stream=watch`) is a sequence of frames, each a 4-byte big-endian length
 *   and then a bare `metav1.WatchEvent` message — no magic, no Unknown envelope — whose
 *   `object.raw` holds the complete enveloped object. Upstream wires `StreamSerializer:
 *   protobuf.NewRawSerializer` with `Framer: protobuf.LengthDelimitedFramer` (codec_factory.go),
 *   and the watch handler encodes the embedded object with the normal (enveloped) serializer.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { Converter } from './protobuf/convert.js';
import { FieldError } from './protobuf/errors.js';
import { ProtoSchema } from './protobuf/schema.js';
import { checkValueDepth, DepthError } from '../schema/depth.js';
import { isRecord, type KubeObject } from '../api/object.js';
import { fieldLength, varintLength, writeField, writeVarint } from './protobuf/wire.js';
import { WireEncoder } from './protobuf/wire-encoder.js';
import { TextWireEncoder } from './protobuf/text-encoder.js';

/** The envelope's last fields, contentEncoding and contentType, both empty (upstream writes them too). */
export const ENVELOPE_CLOSE = Uint8Array.of(0x1a, 0x00, 0x22, 0x00);

const textEncoder = new TextEncoder();

export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);
/** The media type in the reference domain; the server derives its own from `--api-domain`. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.platform.protobuf';

/** The kind has no protobuf message (custom resources, aggregated APIs, Table): answer 406 / use JSON. */
export class ProtobufUnsupportedError extends Error {}
/** The object cannot be represented (a field value of the wrong JSON type, bad base64, bad time). */
export class ProtobufEncodeError extends Error {}
/** The bytes are not a valid protobuf envelope or message: a 400 for request bodies. */
export class ProtobufDecodeError extends Error {}

export interface ProtobufCodecOptions {
  /** OpenAPI v2 document with the JSON field names; default: openapi-v2.json beside the descriptor. */
  openapiPath?: string | URL;
  /** API domain the server runs with, so `rbac.authorization.<domain>` resolves like `…plat.io`. */
  apiDomain?: string;
}

/**
 * An object as decodeObject yields it: kind and apiVersion first, then the message's fields as
 * JSON (typed by the kind's message, so metadata is an ObjectMeta when present).
 */
export type DecodedObject = KubeObject & Record<string, unknown> & { kind: string; apiVersion: string };

export interface DecodedWatchEvent {
  type: string;
  object: DecodedObject;
}

/** runtime.Unknown as protobufjs decodes the envelope (unset strings read as ""). */
interface UnknownEnvelope {
  typeMeta?: { apiVersion?: string; kind?: string } | null;
  raw?: Uint8Array | null;
  contentEncoding?: string;
  contentType?: string;
}

/** metav1.WatchEvent as protobufjs decodes a frame (an unset type reads as its default, ""). */
interface WatchEventMessage {
  type?: string;
  object?: { raw?: Uint8Array | null } | null;
}

/** The apiVersion and kind of an object to encode: a ProtobufEncodeError without them. */
function typeMetaOf(obj: unknown): { apiVersion: string; kind: string } {
  const apiVersion = isRecord(obj) ? obj.apiVersion : undefined;
  const kind = isRecord(obj) ? obj.kind : undefined;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion || !kind) {
    throw new ProtobufEncodeError('protobuf: object has no apiVersion and kind');
  }
  return { apiVersion, kind };
}

const DEFAULT_DESCRIPTOR = new URL('../../../reference/proto-descriptor.json', import.meta.url);

interface Compiled {
  schema: ProtoSchema;
  converter: Converter;
  wire: WireEncoder;
  text: TextWireEncoder;
  unknown: protobuf.Type;
  watchEvent: protobuf.Type;
  types: Map<string, protobuf.Type | null>;
}

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function hasMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
}

function fieldPath(path: string[]): string {
  return path.reduce((s, p) => (p.startsWith('[') ? s + p : s ? `${s}.${p}` : p), '');
}

export class ProtobufCodec {
  private compiled?: Compiled;

  constructor(
    private readonly descriptorPath: string | URL = DEFAULT_DESCRIPTOR,
    private readonly options: ProtobufCodecOptions = {},
  ) {}

  /** The message type of a kind, or undefined when the kind has none. */
  typeFor(group: string, version: string, kind: string): protobuf.Type | undefined {
    const c = this.load();
    const key = `${group}/${version}/${kind}`;
    let type = c.types.get(key);
    if (type === undefined) {
      type = this.resolveType(c, group, version, kind) ?? null;
      c.types.set(key, type);
    }
    return type ?? undefined;
  }

  /** Whether objects of this apiVersion and kind can be encoded. */
  supports(apiVersion: string, kind: string): boolean {
    const { group, version } = parseApiVersion(apiVersion);
    return this.typeFor(group, version, kind) !== undefined;
  }

  /** JSON object with kind and apiVersion → magic + Unknown envelope. */
  encodeObject(obj: unknown): Uint8Array {
    const { apiVersion, kind } = typeMetaOf(obj);
    return this.envelope(apiVersion, kind, this.encodeMessage(obj));
  }

  /**
   * The kind's bare message (no envelope): what a list carries per item and `raw` holds, in a
   * buffer of its own of exactly its size (an entry may keep it). Written straight from the JSON
   * (protobuf/wire-encoder.ts); values that path leaves to the converter take `referenceMessage`.
   */
  encodeMessage(obj: unknown): Uint8Array {
    const type = this.messageType(obj);
    return this.load().wire.encode(type, obj) ?? new Uint8Array(this.converterMessage(type, obj));
  }

  /**
   * The bare message of an object from its JSON text as JSON.stringify wrote it (a cache entry's
   * json: protobuf/text-encoder.ts), as `apiVersion`: the bytes encodeMessage answers for the
   * parsed object, in an own buffer; undefined when the text must be parsed (the caller then
   * calls encodeMessage). The kind is read from the text's first member.
   */
  encodeJsonText(text: string, apiVersion: string, ascii = false): Uint8Array | undefined {
    const c = this.load();
    const type = c.text.typeOf(text, apiVersion, (group, version, kind) => this.typeFor(group, version, kind));
    return type ? c.text.encode(type, text, ascii) : undefined;
  }

  /** As encodeJsonText, from the text's UTF-8 bytes, as `type` (a list's helper thread: protobuf/encode-helper.ts). */
  encodeJsonBytes(type: protobuf.Type, bytes: Uint8Array): Uint8Array | undefined {
    return this.load().text.encodeBytes(type, bytes);
  }

  /** The direct path's bytes alone; undefined where it leaves the object to the converter (tests, benches). */
  directMessage(obj: unknown): Uint8Array | undefined {
    return this.load().wire.encode(this.messageType(obj), obj);
  }

  /** The same bytes by the converter and protobufjs (the reference the direct paths are tested against). */
  referenceMessage(obj: unknown): Uint8Array {
    return this.converterMessage(this.messageType(obj), obj);
  }

  private messageType(obj: unknown): protobuf.Type {
    const { apiVersion, kind } = typeMetaOf(obj);
    const { group, version } = parseApiVersion(apiVersion);
    const type = this.typeFor(group, version, kind);
    if (!type) throw new ProtobufUnsupportedError(`protobuf: no message for ${apiVersion}, Kind=${kind}`);
    return type;
  }

  private converterMessage(type: protobuf.Type, obj: unknown): Uint8Array {
    let message: Record<string, unknown>;
    try {
      message = this.load().converter.toMessage(type, obj);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      const { kind } = typeMetaOf(obj);
      throw new ProtobufEncodeError(`protobuf: cannot encode ${kind} field ${fieldPath(e.path)}: ${e.message}`);
    }
    return type.encode(message).finish();
  }

  /**
   * The bytes of a list's envelope up to its first item, given the total size of its items'
   * fields: magic, typeMeta, the `raw` field's tag and length, the head's message. The items
   * follow as `items` fields (tag `tag`), then ENVELOPE_CLOSE; so a list can be written in
   * pieces (a streamed LIST's pages) once its items' sizes are known.
   */
  listOpening(
    head: { kind: string; apiVersion: string; metadata: object },
    itemFieldsSize: number,
  ): { open: Uint8Array; tag: number } {
    const { group, version } = parseApiVersion(head.apiVersion);
    const type = this.typeFor(group, version, head.kind);
    const field = type?.fields.items;
    if (!type || !field)
      throw new ProtobufUnsupportedError(`protobuf: no list message for ${head.apiVersion}, Kind=${head.kind}`);
    const headBytes = type.encode(this.load().converter.toMessage(type, head)).finish();
    const tag = (field.id << 3) | 2;
    if (tag >= 0x80)
      throw new ProtobufUnsupportedError(`protobuf: items field number ${field.id} of ${head.kind} is too large`);
    const av = textEncoder.encode(head.apiVersion);
    const k = textEncoder.encode(head.kind);
    const typeMeta = fieldLength(av.length) + fieldLength(k.length);
    const rawLength = headBytes.length + itemFieldsSize;
    const open = new Uint8Array(4 + fieldLength(typeMeta) + 1 + varintLength(rawLength) + headBytes.length);
    open.set(PROTOBUF_MAGIC);
    let at = 4;
    open[at++] = 0x0a;
    at = writeVarint(open, at, typeMeta);
    at = writeField(open, at, 0x0a, av);
    at = writeField(open, at, 0x12, k);
    open[at++] = 0x12;
    at = writeVarint(open, at, rawLength);
    open.set(headBytes, at);
    return { open, tag };
  }

  /** magic + Unknown{typeMeta, raw, contentEncoding "", contentType ""}. */
  envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
    const av = textEncoder.encode(apiVersion);
    const k = textEncoder.encode(kind);
    const typeMeta = fieldLength(av.length) + fieldLength(k.length);
    // contentEncoding and contentType are written empty (upstream writes them too)
    const out = new Uint8Array(4 + fieldLength(typeMeta) + fieldLength(raw.length) + 4);
    out.set(PROTOBUF_MAGIC);
    let at = 4;
    out[at++] = 0x0a;
    at = writeVarint(out, at, typeMeta);
    at = writeField(out, at, 0x0a, av);
    at = writeField(out, at, 0x12, k);
    at = writeField(out, at, 0x12, raw);
    out.set(ENVELOPE_CLOSE, at);
    return out;
  }

  /**
   * Envelope bytes → JSON object (kind and apiVersion first). `defaults` fill a typeMeta the
   * sender left empty, as upstream does with the kind of the request path.
   */
  decodeObject(bytes: Uint8Array, defaults: { apiVersion?: string; kind?: string } = {}): DecodedObject {
    const obj = this.decodeEnvelope(bytes, defaults);
    // exact and linear, over every envelope at once: the converter's count is a lower bound
    try {
      checkValueDepth(obj);
    } catch (e) {
      if (!(e instanceof DepthError)) throw e;
      throw new ProtobufDecodeError(`protobuf: cannot decode ${obj.kind}: ${e.message}`);
    }
    return obj;
  }

  /** One envelope → object, without the whole-object depth check (nested envelopes come here). */
  private decodeEnvelope(bytes: Uint8Array, defaults: { apiVersion?: string; kind?: string }): DecodedObject {
    const c = this.load();
    if (!(bytes instanceof Uint8Array) || !hasMagic(bytes)) {
      throw new ProtobufDecodeError('protobuf: data does not start with the envelope prefix 6b 38 73 00');
    }
    let unknown: UnknownEnvelope;
    try {
      // decoded by runtime.Unknown's message type: the fields have its types
      unknown = c.unknown.decode(bytes.subarray(4)) as UnknownEnvelope;
    } catch (e) {
      throw new ProtobufDecodeError(`protobuf: malformed envelope: ${(e as Error).message}`);
    }
    if (unknown.contentEncoding)
      throw new ProtobufDecodeError(`protobuf: unsupported contentEncoding ${JSON.stringify(unknown.contentEncoding)}`);
    if (unknown.contentType && !unknown.contentType.includes('protobuf')) {
      throw new ProtobufDecodeError(`protobuf: unsupported contentType ${JSON.stringify(unknown.contentType)}`);
    }
    const apiVersion = unknown.typeMeta?.apiVersion || defaults.apiVersion || '';
    const kind = unknown.typeMeta?.kind || defaults.kind || '';
    if (!kind) throw new ProtobufDecodeError("protobuf: Object 'Kind' is missing in the envelope");
    if (!apiVersion) throw new ProtobufDecodeError("protobuf: Object 'apiVersion' is missing in the envelope");
    const { group, version } = parseApiVersion(apiVersion);
    const type = this.typeFor(group, version, kind);
    if (!type) throw new ProtobufDecodeError(`protobuf: no message for ${apiVersion}, Kind=${kind}`);
    const raw = unknown.raw ?? new Uint8Array(0);
    try {
      return { kind, apiVersion, ...c.converter.fromMessage(type, type.decode(raw)) };
    } catch (e) {
      if (e instanceof ProtobufDecodeError) throw e;
      const where = e instanceof FieldError && e.path.length ? ` field ${fieldPath(e.path)}` : '';
      throw new ProtobufDecodeError(`protobuf: cannot decode ${kind}${where}: ${(e as Error).message}`);
    }
  }

  /** A Status (meta/v1, apiVersion "v1" as upstream's unversioned types) as an envelope. */
  encodeStatus(status: Record<string, unknown>): Uint8Array {
    return this.encodeObject({ ...status, kind: 'Status', apiVersion: 'v1' });
  }

  /**
   * One watch stream frame: 4-byte big-endian length, then a bare WatchEvent whose object.raw is
   * the enveloped object (pass already-encoded envelope bytes to reuse them across watchers).
   */
  encodeWatchEvent(type: string, object: Uint8Array | Record<string, unknown>): Uint8Array {
    const c = this.load();
    const raw = object instanceof Uint8Array ? object : this.encodeObject(object);
    const w = protobuf.Writer.create();
    // four one-byte placeholders, overwritten with the big-endian frame length below
    w.uint32(0).uint32(0).uint32(0).uint32(0);
    c.watchEvent.encode({ type, object: { raw } }, w);
    const out = w.finish();
    new DataView(out.buffer, out.byteOffset, 4).setUint32(0, out.length - 4, false);
    return out;
  }

  /** Inverse of encodeWatchEvent for one frame (length prefix included). */
  decodeWatchEvent(frame: Uint8Array): DecodedWatchEvent {
    const c = this.load();
    if (frame.length < 4) throw new ProtobufDecodeError('protobuf: watch frame shorter than its length prefix');
    const length = new DataView(frame.buffer, frame.byteOffset, 4).getUint32(0, false);
    if (length !== frame.length - 4)
      throw new ProtobufDecodeError(`protobuf: watch frame length ${length} does not match ${frame.length - 4} bytes`);
    let event: WatchEventMessage;
    try {
      // decoded by metav1.WatchEvent's message type: the fields have its types
      event = c.watchEvent.decode(frame.subarray(4)) as WatchEventMessage;
    } catch (e) {
      throw new ProtobufDecodeError(`protobuf: malformed watch event: ${(e as Error).message}`);
    }
    return { type: event.type ?? '', object: this.decodeObject(event.object?.raw ?? new Uint8Array(0)) };
  }

  /** Splits a stream buffer into complete frames (each with its prefix) and the unread rest. */
  static splitFrames(buffer: Uint8Array): { frames: Uint8Array[]; rest: Uint8Array } {
    const frames: Uint8Array[] = [];
    let at = 0;
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    while (buffer.length - at >= 4) {
      const end = at + 4 + view.getUint32(at, false);
      if (end > buffer.length) break;
      frames.push(buffer.subarray(at, end));
      at = end;
    }
    return { frames, rest: buffer.subarray(at) };
  }

  private load(): Compiled {
    if (this.compiled) return this.compiled;
    const descriptor = JSON.parse(readFileSync(this.descriptorPath, 'utf8'));
    const openapiPath = this.options.openapiPath ?? new URL('openapi-v2.json', new URL('.', this.descriptorURL()));
    const openapi = JSON.parse(readFileSync(openapiPath, 'utf8'));
    const schema = new ProtoSchema(descriptor, openapi, this.options.apiDomain);
    const converter = new Converter(schema, (bytes) => this.decodeEnvelope(bytes, {}));
    const delegate = (type: protobuf.Type, v: unknown) => type.encode(converter.toMessage(type, v)).finish();
    this.compiled = {
      schema,
      converter,
      wire: new WireEncoder(schema, delegate),
      text: new TextWireEncoder(schema, delegate),
      unknown: schema.root.lookupType(`${schema.base}.apimachinery.pkg.runtime.Unknown`),
      watchEvent: schema.root.lookupType(`${schema.base}.apimachinery.pkg.apis.meta.v1.WatchEvent`),
      types: new Map(),
    };
    return this.compiled;
  }

  private descriptorURL(): URL {
    const p = this.descriptorPath;
    return p instanceof URL ? p : pathToFileURL(resolve(p));
  }

  private resolveType(c: Compiled, group: string, version: string, kind: string): protobuf.Type | undefined {
    const lookup = (name: string): protobuf.Type | undefined => {
      const t = c.schema.root.lookup(name);
      return t instanceof protobuf.Type ? t : undefined;
    };
    const pkg = c.schema.packageFor(group, version);
    const own = pkg ? lookup(`${pkg}.${kind}`) : undefined;
    if (own) return own;
    const key = c.schema.groupKey(group);
    // meta types (DeleteOptions, ...) come under every group version and `meta.<any domain>/v1`
    if (!pkg && key !== '' && key !== 'meta' && !key.startsWith('meta.')) return undefined;
    const meta = `${c.schema.base}.apimachinery.pkg.apis.meta`;
    return lookup(`${meta}.${version}.${kind}`) ?? lookup(`${meta}.v1.${kind}`);
  }
}
