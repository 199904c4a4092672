/**
 * A JSON object written straight to protobuf wire bytes, with no protobufjs message in between:
 * per message type, compiled on first use from the descriptor and the JSON layout (schema.ts),
 * the fields in field-number order with their tags precomputed, each reading its JSON key.
 *
 * Contract: the bytes are exactly what `type.encode(converter.toMessage(type, json))` writes
 * (convert.ts and protobufjs): the same JSON key → field routing (Go embedded structs inlined,
 * the first declared field winning a key), the same special apimachinery forms, map entries in
 * the JSON object's key order, empty repeated fields left out. Where the converter would refuse a
 * value, or where exactness needs protobufjs (the apiextensions schema unions, Go named slices,
 * scalar types the built-in kinds do not use), this path does not decide: `encode` answers
 * undefined (the caller runs the converter path and reports its error) or hands that one value
 * to `delegate`.
 */
import protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';
import { parseTime } from './time.js';
import { stringifyValue } from '../../schema/deep-value.js';
import { isRecord } from '../../api/object.js';
import * as w from './wire-writer.js';
import {
  BASE64,
  fieldTag,
  KEY_TAG,
  MAX_DEPTH,
  orderedFields,
  routesOf,
  specialKind,
  tagBytes,
  WIRE_TYPE,
} from './wire-plan.js';

/** Writes one non-null JSON value of a field: its tag(s) and its value. */
type FieldWrite = (v: unknown, depth: number) => void;
/** Writes the content of a message (no tag, no length) from a JSON value. */
type ContentWrite = (v: unknown, depth: number) => void;

interface LeafField {
  key: string;
  /** the key is also a property of Object.prototype: read it only when own */
  ownOnly: boolean;
  write: FieldWrite;
}
/** A Go embedded struct: its members' JSON keys sit in the parent object. */
interface InlineField {
  tag: Uint8Array;
  keys: string[];
  node: Node;
}
interface Node {
  fields: (LeafField | InlineField)[];
}

/** A scalar of the given proto type, validated as convert.ts's scalarEnc validates it. */
function scalarWriter(type: string): ((v: unknown) => void) | undefined {
  switch (type) {
    case 'string':
      return (v) => (typeof v === 'string' ? w.string(v) : fail());
    case 'bool':
      return (v) => (typeof v === 'boolean' ? w.bool(v) : fail());
    case 'int32':
      return (v) => (Number.isInteger(v) ? w.int32(v as number) : fail());
    case 'int64':
      return (v) => (Number.isInteger(v) ? w.int64(v as number) : fail());
    case 'double':
      return (v) => (typeof v === 'number' ? w.double(v) : fail());
    case 'bytes':
      return (v) =>
        typeof v === 'string' && v.length % 4 === 0 && BASE64.test(v) ? w.bytes(Buffer.from(v, 'base64')) : fail();
  }
  return undefined;
}

const fail = w.fallback;

export class WireEncoder {
  private readonly contents = new Map<protobuf.Type, ContentWrite>();

  /**
   * delegate: one value of a type this encoder does not compile, as protobufjs writes the
   * converter's message for it (bare message bytes, no tag).
   */
  constructor(
    private readonly schema: ProtoSchema,
    private readonly delegate: (type: protobuf.Type, v: unknown) => Uint8Array,
  ) {}

  /** The bare message of `type` for a JSON object, or undefined when the converter path must answer. */
  encode(type: protobuf.Type, json: unknown): Uint8Array | undefined {
    w.reset();
    try {
      this.content(type)(json, 0);
    } catch {
      // WireFallback, or the converter's own refusal met in a delegated value or a time: the
      // converter path gives the answer (and the error with its field path)
      return undefined;
    }
    return w.take();
  }

  /** The content writer of a message type, compiled on first use (recursive types resolve lazily). */
  private content(type: protobuf.Type): ContentWrite {
    let c = this.contents.get(type);
    if (!c) {
      let compiled: ContentWrite | undefined;
      // placeholder while compiling: a type reaching itself calls the finished writer
      this.contents.set(type, (v, d) => compiled!(v, d));
      compiled = this.special(type) ?? this.messageContent(type);
      this.contents.set(type, compiled);
      c = compiled;
    }
    return c;
  }

  private messageContent(type: protobuf.Type): ContentWrite {
    const node = this.node(type, routesOf(this.schema, type));
    if (!node) return this.delegated(type);
    return (v, depth) => {
      if (!isRecord(v)) fail();
      writeNode(node, v as Record<string, unknown>, depth);
    };
  }

  /** The fields of `type` in number order that hold routed keys; undefined when a field cannot be compiled. */
  private node(type: protobuf.Type, routes: Map<string, string>, path = ''): Node | undefined {
    const fields: (LeafField | InlineField)[] = [];
    for (const { f, json, inline } of orderedFields(this.schema, type)) {
      if (inline) {
        const sub = f.resolvedType as protobuf.Type;
        if (specialKind(this.schema, sub)) continue; // convert.ts routes no key into it
        const node = this.node(sub, routes, `${path}${f.name}.`);
        if (!node) return undefined;
        const keys = nodeKeys(node);
        if (keys.length) fields.push({ tag: tagBytes(f.id, 2), keys, node });
        continue;
      }
      if (routes.get(json) !== path + f.name) continue;
      const write = this.fieldWrite(f);
      if (!write) return undefined;
      fields.push({ key: json, ownOnly: json in Object.prototype, write });
    }
    return { fields };
  }

  private fieldWrite(f: protobuf.Field): FieldWrite | undefined {
    if (f.map) return this.mapWrite(f);
    const value = this.valueWrite(f.type, f.resolvedType, tagBytes(f.id, WIRE_TYPE[f.type] ?? 2));
    if (!value) return undefined;
    if (!f.repeated) return value;
    if (f.packed && !f.resolvedType) return undefined; // the built-in kinds' descriptor has none
    return (v, depth) => {
      if (!Array.isArray(v)) fail();
      const a = v as unknown[];
      for (let i = 0; i < a.length; i++) value(a[i], depth);
    };
  }

  /** One value with its tag: a scalar, or a message (length-delimited) of its content writer. */
  private valueWrite(
    type: string,
    resolved: protobuf.ReflectionObject | null,
    tag: Uint8Array,
  ): FieldWrite | undefined {
    if (resolved instanceof protobuf.Type) {
      const sub = resolved;
      let content: ContentWrite | undefined;
      return (v, depth) => {
        if (depth >= MAX_DEPTH) fail();
        w.raw(tag);
        const start = w.open();
        (content ??= this.content(sub))(v, depth + 1);
        w.close(start);
      };
    }
    if (resolved) return undefined; // enums: none in the built-in kinds
    const scalar = scalarWriter(type);
    if (!scalar) return undefined;
    return (v) => {
      w.raw(tag);
      scalar(v);
    };
  }

  /** A map field: one entry message per non-null value, key (field 1) then value (field 2). */
  private mapWrite(f: protobuf.Field): FieldWrite | undefined {
    const keyType = f instanceof protobuf.MapField ? f.keyType : undefined;
    if (keyType !== 'string') return undefined;
    const tag = tagBytes(f.id, 2);
    const value = this.valueWrite(f.type, f.resolvedType, tagBytes(2, WIRE_TYPE[f.type] ?? 2));
    if (!value) return undefined;
    return (v, depth) => {
      if (typeof v !== 'object' || Array.isArray(v)) fail();
      const map = v as Record<string, unknown>;
      for (const k in map) {
        const x = map[k];
        if (x === null || x === undefined) continue;
        w.raw(tag);
        const start = w.open();
        w.raw(KEY_TAG);
        w.string(k);
        // protobufjs encodes a map's message value one level deeper than the map's own message
        value(x, depth);
        w.close(start);
      }
    };
  }

  /** Content writers of the special apimachinery forms (convert.ts Converter.special). */
  private special(type: protobuf.Type): ContentWrite | undefined {
    const kind = specialKind(this.schema, type);
    switch (kind) {
      case undefined:
        return undefined;
      case 'time':
      case 'microTime': {
        const [seconds, nanos, micro] = [fieldTag(type, 'seconds'), fieldTag(type, 'nanos'), kind === 'microTime'];
        let last: unknown;
        let lastTime: { seconds: number; nanos?: number } | undefined;
        return (v) => {
          // objects written in the same second repeat their times (creation, managed fields): parsed once
          const t = v === last && lastTime ? lastTime : parseTime(v, micro);
          last = v;
          lastTime = t;
          w.raw(seconds);
          w.int64(t.seconds);
          if (t.nanos !== undefined) {
            w.raw(nanos);
            w.int32(t.nanos);
          }
        };
      }
      case 'intOrString': {
        const [tag, intVal, strVal] = [fieldTag(type, 'type'), fieldTag(type, 'intVal'), fieldTag(type, 'strVal')];
        return (v) => {
          if (typeof v === 'string') {
            w.raw(tag);
            w.int64(1);
            w.raw(strVal);
            w.string(v);
          } else if (Number.isInteger(v)) {
            w.raw(tag);
            w.int64(0);
            w.raw(intVal);
            w.int32(v as number);
          } else fail();
        };
      }
      case 'quantity': {
        const tag = fieldTag(type, 'string');
        return (v) => {
          if (typeof v !== 'string' && typeof v !== 'number') fail();
          w.raw(tag);
          w.string(typeof v === 'string' ? v : String(v));
        };
      }
      case 'raw':
      case 'Raw':
        return rawJson(fieldTag(type, kind));
      case 'delegate':
        return this.delegated(type);
    }
  }

  /** A message written by protobufjs from the converter's message (the delegate). */
  private delegated(type: protobuf.Type): ContentWrite {
    return (v) => w.raw(this.delegate(type, v));
  }
}

/** A bytes field holding the value's JSON text (convert.ts rawJsonEnc). */
function rawJson(tag: Uint8Array): ContentWrite {
  return (v) => {
    w.raw(tag);
    w.stringAsBytes(stringifyValue(v));
  };
}

function nodeKeys(node: Node): string[] {
  return node.fields.flatMap((f) => ('key' in f ? [f.key] : f.keys));
}

/** A message's fields from a JSON object, in field-number order. */
function writeNode(node: Node, json: Record<string, unknown>, depth: number): void {
  const fields = node.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if ('key' in f) {
      const v = f.ownOnly && !Object.hasOwn(json, f.key) ? undefined : json[f.key];
      if (v !== null && v !== undefined) f.write(v, depth);
    } else if (present(json, f.keys)) {
      // an embedded struct: a message of its own on the wire, written when one of its keys is set
      if (depth >= MAX_DEPTH) fail();
      w.raw(f.tag);
      const start = w.open();
      writeNode(f.node, json, depth + 1);
      w.close(start);
    }
  }
}

function present(json: Record<string, unknown>, keys: string[]): boolean {
  for (const k of keys) {
    const v = json[k];
    if (v !== null && v !== undefined && (!(k in Object.prototype) || Object.hasOwn(json, k))) return true;
  }
  return false;
}
