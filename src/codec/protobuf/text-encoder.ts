/**
 * A stored object's JSON text written straight to protobuf wire bytes, without parsing it into
 * an object: per JSON object, one pass reads its keys into the slots of the message's routed
 * fields (sub-objects recursively, scalars and raw JSON as spans of the text), then the fields
 * are written in field-number order from the slots. A list's first Protobuf encoding of an entry
 * costs neither JSON.parse nor its garbage, and raw JSON (managed fields' FieldsV1) is copied
 * from the text instead of stringified again.
 *
 * Contract: the text is JSON.stringify's output for the object (cache entries' json is, see
 * registry/read-store.ts entryOf): compact, keys in the object's own order, so a sub-value's
 * span is its stringified JSON and a map's keys come in Object.keys order. The bytes are then
 * those of wire-encoder.ts for the parsed object (and so protobufjs' for the converter's
 * message). Anything else (a value of the wrong type, a null array element, whitespace, a
 * delegated type's refusal) makes `encode` answer undefined: the caller encodes the parsed object.
 */
import protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';
import { parseTime } from './time.js';
import * as w from './wire-writer.js';
import * as t from './text-scan.js';
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

/** A JSON object read into slots: [start, end] spans of the text, or a sub-record at start = -1. */
type Rec = unknown[];
/** Reads the value at the scanner's position into slot i of rec (nothing for null). */
type Read = (rec: Rec, i: number) => void;
/** Writes slot i of rec (known present) with its tag(s). */
type Write = (rec: Rec, i: number, depth: number) => void;

interface Plan {
  keys: t.KeyIndex;
  reads: Read[];
  node: Node;
}
interface Leaf {
  slot: number;
  write: Write;
}
interface Inline {
  tag: Uint8Array;
  slots: number[];
  node: Node;
}
interface Node {
  fields: (Leaf | Inline)[];
}

/** A value of one field type: how to read it from the text and write it (no tag). */
interface Codec {
  /** reads the value at the scanner's position (never null here); answers what the slot keeps */
  read(): unknown;
  write(v: unknown, depth: number): void;
}

const fail = (): never => {
  throw w.FALLBACK;
};

export class TextWireEncoder {
  private readonly plans = new Map<protobuf.Type, Plan>();
  private readonly codecs = new Map<protobuf.Type, Codec>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly delegate: (type: protobuf.Type, v: unknown) => Uint8Array,
  ) {}

  /** The bare message of `type` for an object's JSON text, or undefined when the caller must parse it. */
  encode(type: protobuf.Type, text: string): Uint8Array | undefined {
    try {
      t.begin(text);
      const plan = this.plan(type);
      const rec = readObject(plan);
      if (!t.atEnd()) return undefined;
      w.reset();
      writeNode(plan.node, rec, 0);
      return w.take();
    } catch {
      return undefined;
    }
  }

  private plan(type: protobuf.Type): Plan {
    let plan = this.plans.get(type);
    if (!plan) {
      plan = { keys: new t.KeyIndex(), reads: [], node: { fields: [] } };
      this.plans.set(type, plan);
      plan.node = this.node(plan, type, routesOf(this.schema, type), '');
    }
    return plan;
  }

  private node(plan: Plan, type: protobuf.Type, routes: Map<string, string>, path: string): Node {
    const fields: (Leaf | Inline)[] = [];
    for (const { f, json, inline } of orderedFields(this.schema, type)) {
      if (inline) {
        const sub = f.resolvedType as protobuf.Type;
        if (specialKind(this.schema, sub)) continue;
        const node = this.node(plan, sub, routes, `${path}${f.name}.`);
        const slots = nodeSlots(node);
        if (slots.length) fields.push({ tag: tagBytes(f.id, 2), slots, node });
        continue;
      }
      if (routes.get(json) !== path + f.name) continue;
      const slot = plan.reads.length;
      plan.keys.add(json, slot);
      const { read, write } = this.field(f);
      plan.reads.push(read);
      fields.push({ slot, write });
    }
    return { fields };
  }

  /** Read and write of one field: single, repeated (each element with its tag) or map. */
  private field(f: protobuf.Field): { read: Read; write: Write } {
    const tag = tagBytes(f.id, WIRE_TYPE[f.type] ?? 2);
    if (f.map) {
      if (!(f instanceof protobuf.MapField) || f.keyType !== 'string') return unsupported;
      const value = this.codec(f.type, f.resolvedType);
      const valueTag = tagBytes(2, WIRE_TYPE[f.type] ?? 2);
      return {
        read: (rec, i) => (rec[i] = t.readEntries(value.read)),
        write: (rec, i, depth) => {
          const entries = rec[i] as unknown[];
          for (let k = 0; k < entries.length; k += 2) {
            w.raw(tag);
            const start = w.open();
            w.raw(KEY_TAG);
            w.string(entries[k] as string);
            w.raw(valueTag);
            value.write(entries[k + 1], depth);
            w.close(start);
          }
        },
      };
    }
    const value = this.codec(f.type, f.resolvedType);
    if (f.repeated) {
      if (f.packed && !f.resolvedType) return unsupported;
      return {
        read: (rec, i) => (rec[i] = t.readElements(value.read)),
        write: (rec, i, depth) => {
          const items = rec[i] as unknown[];
          for (let k = 0; k < items.length; k++) {
            w.raw(tag);
            value.write(items[k], depth);
          }
        },
      };
    }
    return {
      read: (rec, i) => (rec[i] = value.read()),
      write: (rec, i, depth) => {
        w.raw(tag);
        value.write(rec[i], depth);
      },
    };
  }

  /** The codec of a field type: a scalar, a special form, or a message (length-delimited). */
  private codec(type: string, resolved: protobuf.ReflectionObject | null): Codec {
    if (!(resolved instanceof protobuf.Type)) return resolved ? failing : scalarCodec(type);
    let c = this.codecs.get(resolved);
    if (!c) {
      const sub = resolved;
      const special = specialKind(this.schema, sub);
      const content = special ? this.specialContent(sub, special) : undefined;
      let plan: Plan | undefined; // resolved on first use: a type may reach itself
      c = content
        ? {
            read: t.readSpan,
            write: (v, depth) => {
              if (depth >= MAX_DEPTH) fail();
              const start = w.open();
              content(v as number);
              w.close(start);
            },
          }
        : {
            read: () => readObject((plan ??= this.plan(sub))),
            write: (v, depth) => {
              if (depth >= MAX_DEPTH) fail();
              const start = w.open();
              writeNode((plan ??= this.plan(sub)).node, v as Rec, depth + 1);
              w.close(start);
            },
          };
      this.codecs.set(resolved, c);
    }
    return c;
  }

  /** The special forms' content from a span (its start; the scanner keeps the end), as wire-encoder.ts writes them. */
  private specialContent(
    type: protobuf.Type,
    kind: NonNullable<ReturnType<typeof specialKind>>,
  ): (span: number) => void {
    switch (kind) {
      case 'time':
      case 'microTime':
        return timeContent(type, kind === 'microTime');
      case 'intOrString': {
        const [tag, intVal, strVal] = [fieldTag(type, 'type'), fieldTag(type, 'intVal'), fieldTag(type, 'strVal')];
        return (span) => {
          if (t.isString(span)) {
            w.raw(tag);
            w.int64(1);
            w.raw(strVal);
            t.writeString(span);
          } else {
            const n = t.numberAt(span);
            if (!Number.isInteger(n)) fail();
            w.raw(tag);
            w.int64(0);
            w.raw(intVal);
            w.int32(n);
          }
        };
      }
      case 'quantity': {
        const tag = fieldTag(type, 'string');
        return (span) => {
          w.raw(tag);
          if (t.isString(span)) t.writeString(span);
          else w.string(String(t.numberAt(span)));
        };
      }
      case 'raw':
      case 'Raw': {
        const tag = fieldTag(type, kind);
        return (span) => {
          w.raw(tag);
          w.stringAsBytes(t.textOf(span));
        };
      }
      case 'delegate':
        return (span) => w.raw(this.delegate(type, JSON.parse(t.textOf(span))));
    }
  }
}

const unsupported: { read: Read; write: Write } = { read: fail, write: fail };
const failing: Codec = { read: fail, write: fail };

/** A Time or MicroTime from its RFC 3339 string (convert.ts parseTime); the times objects repeat are parsed once. */
function timeContent(type: protobuf.Type, micro: boolean): (span: number) => void {
  const [seconds, nanos] = [fieldTag(type, 'seconds'), fieldTag(type, 'nanos')];
  let last = '';
  let lastTime: { seconds: number; nanos?: number } | undefined;
  return (span) => {
    const s = t.stringAt(span);
    const time = s === last && lastTime ? lastTime : parseTime(s, micro);
    last = s;
    lastTime = time;
    w.raw(seconds);
    w.int64(time.seconds);
    if (time.nanos !== undefined) {
      w.raw(nanos);
      w.int32(time.nanos);
    }
  };
}

/** Scalars from their tokens, validated as convert.ts's scalarEnc validates the parsed values. */
function scalarCodec(type: string): Codec {
  switch (type) {
    case 'string':
      return { read: t.readSpan, write: (v) => (t.isString(v as number) ? t.writeString(v as number) : fail()) };
    case 'bool':
      return { read: t.readSpan, write: (v) => w.bool(t.boolAt(v as number)) };
    case 'int32':
    case 'int64': {
      const put = type === 'int32' ? w.int32 : w.int64;
      return {
        read: t.readSpan,
        write: (v) => {
          const n = t.numberAt(v as number);
          if (!Number.isInteger(n)) fail();
          put(n);
        },
      };
    }
    case 'double':
      return { read: t.readSpan, write: (v) => w.double(t.numberAt(v as number)) };
    case 'bytes':
      return {
        read: t.readSpan,
        write: (v) => {
          const s = t.stringAt(v as number);
          if (s.length % 4 !== 0 || !BASE64.test(s)) fail();
          w.bytes(Buffer.from(s, 'base64'));
        },
      };
  }
  return failing;
}

/** Reads the JSON object at the scanner's position into a record of the plan's slots. */
function readObject(plan: Plan): Rec {
  const rec: Rec = new Array<unknown>(plan.reads.length);
  const reads = plan.reads;
  t.readMembers(plan.keys, (slot) => {
    if (t.skipNull()) rec[slot] = undefined;
    else reads[slot]!(rec, slot);
  });
  return rec;
}

function writeNode(node: Node, rec: Rec, depth: number): void {
  const fields = node.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if ('slot' in f) {
      if (rec[f.slot] !== undefined) f.write(rec, f.slot, depth);
    } else if (f.slots.some((s) => rec[s] !== undefined)) {
      // an embedded struct: a message of its own on the wire, written when one of its keys is set
      if (depth >= MAX_DEPTH) fail();
      w.raw(f.tag);
      const start = w.open();
      writeNode(f.node, rec, depth + 1);
      w.close(start);
    }
  }
}

function nodeSlots(node: Node): number[] {
  return node.fields.flatMap((f) => ('slot' in f ? [f.slot] : f.slots));
}
