/**
 * Compiled converters between the upstream JSON form of an object and protobufjs message values.
 * A plan per message type is built on first use; special apimachinery types (Time, MicroTime,
 * IntOrString, Quantity, RawExtension, FieldsV1, apiextensions JSON and the JSONSchemaPropsOr*
 * unions, `[]string` wrappers such as ExtraValue) follow the upstream JSON marshallers.
 */
import protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';
import { FieldError } from './errors.js';
import { formatMicroTime, formatTime, parseTime, toNumber, type LongLike, type TimeMessage } from './time.js';
import { checkBracketDepth, DepthError, MAX_NESTING_DEPTH } from '../../schema/depth.js';
import { OMIT_ZERO } from './generated/omit-zero.js';
import { stringifyValue } from '../../schema/deep-value.js';
import { setOwn } from '../../api/own-keys.js';
import { isRecord } from '../../api/object.js';

/** JSON value → protobufjs value (a FieldError when the value does not fit the field). */
type Enc = (v: unknown) => unknown;
/**
 * protobufjs value (message instance, Long, Buffer…) → JSON value; undefined means omit. A
 * decoder is compiled for one field type and called only with values protobufjs decoded for
 * that field, so it declares the value it reads (a message's fields, Uint8Array, Long): the
 * signature is a method's, whose parameter is compared bivariantly.
 */
interface Decoder {
  dec(v: unknown): unknown;
}
type Dec = Decoder['dec'];
/** A decoded message: its fields by protobufjs property name. */
type Message = Record<string, unknown>;

interface Slot {
  /** proto field name (protobufjs property) */
  name: string;
  json: string;
  kind: 'single' | 'repeated' | 'map';
  enc: Enc;
  dec: Dec;
  /** set for Go embedded structs whose members JSON inlines into the parent */
  inline?: Plan;
  /**
   * a scalar Go field that is a non-pointer with `omitempty`: upstream's Marshal writes its zero
   * value, a JSON client never sends it, so decoding drops it (a pointer's zero is a set value)
   */
  omitZero?: boolean;
}

interface Route {
  hops: string[];
  slot: Slot;
}

interface Plan {
  slots: Slot[];
  routes: Map<string, Route>;
  encode: Enc;
  decode: Dec;
}

/** Decodes bytes nested in a RawExtension that are themselves a protobuf envelope. */
export type NestedDecoder = (bytes: Uint8Array) => unknown;

const own = Object.prototype.hasOwnProperty;
const textDecoder = new TextDecoder('utf-8', { fatal: true });
const INT_TYPES = new Set([
  'int32',
  'uint32',
  'sint32',
  'fixed32',
  'sfixed32',
  'int64',
  'uint64',
  'sint64',
  'fixed64',
  'sfixed64',
]);
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const fail = (detail: string): never => {
  throw new FieldError(detail);
};
const describe = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

function scalarEnc(type: string): Enc {
  if (type === 'string') return (v) => (typeof v === 'string' ? v : fail(`expected string, got ${describe(v)}`));
  if (type === 'bool') return (v) => (typeof v === 'boolean' ? v : fail(`expected boolean, got ${describe(v)}`));
  if (type === 'bytes') {
    return (v) =>
      typeof v === 'string' && v.length % 4 === 0 && BASE64.test(v)
        ? Buffer.from(v, 'base64')
        : fail('expected base64-encoded bytes');
  }
  if (INT_TYPES.has(type)) return (v) => (Number.isInteger(v) ? v : fail(`expected integer, got ${describe(v)}`));
  return (v) => (typeof v === 'number' ? v : fail(`expected number, got ${describe(v)}`));
}

function scalarDec(type: string): Dec {
  if (type === 'bytes') return (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (LONG_TYPES.has(type)) return toNumber;
  return (v) => v;
}

function rawJsonEnc(field: string): Enc {
  return (v) => ({ [field]: Buffer.from(stringifyValue(v)) });
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
/**
 * Raw JSON (or, with `nested`, an enveloped object) held in bytes. `level` is the message level
 * the field belongs to, so the embedded value is measured from where it sits in the whole
 * object, not from its own top.
 */
function rawJsonDec(field: string, level: () => number, nested?: NestedDecoder): Dec {
  return (m: Record<string, Uint8Array | undefined>) => {
    const raw = own.call(m, field) ? m[field] : undefined;
    if (!raw || raw.length === 0) return undefined;
    if (nested && raw.length >= 4 && MAGIC.every((b, i) => raw[i] === b)) return nested(raw);
    const text = textDecoder.decode(raw);
    try {
      checkBracketDepth(text, MAX_NESTING_DEPTH - level());
      return JSON.parse(text);
    } catch (e) {
      if (e instanceof DepthError) return fail(`embedded raw data ${e.message}`);
      return fail('embedded raw data is not JSON');
    }
  };
}

export class Converter {
  private readonly plans = new Map<protobuf.Type, Plan>();
  /**
   * Messages being decoded, outermost first: a lower bound of the JSON depth (arrays and maps
   * add levels it does not count). It spans envelopes nested in RawExtensions, which this
   * converter decodes too, so nesting envelopes cannot reset the count.
   */
  private level = 0;
  private readonly currentLevel = (): number => this.level;

  constructor(
    private readonly schema: ProtoSchema,
    private readonly nested?: NestedDecoder,
  ) {}

  /** JSON object → plain object accepted by `type.encode`. */
  toMessage(type: protobuf.Type, json: unknown): Record<string, unknown> {
    return this.plan(type).encode(json) as Record<string, unknown>;
  }

  /** Decoded message → JSON object (upstream field names, empty values omitted). */
  fromMessage(type: protobuf.Type, message: protobuf.Message): Record<string, unknown> {
    return this.plan(type).decode(message) as Record<string, unknown>;
  }

  private plan(type: protobuf.Type): Plan {
    let plan = this.plans.get(type);
    if (!plan) {
      plan = { slots: [], routes: new Map(), encode: () => undefined, decode: () => undefined };
      this.plans.set(type, plan);
      this.compile(type, plan);
    }
    return plan;
  }

  private compile(type: protobuf.Type, plan: Plan): void {
    const special = this.special(type);
    if (special) {
      plan.encode = special.enc;
      plan.decode = special.dec;
      return;
    }
    const layout = this.schema.layout(type);
    const omitZero = new Set(OMIT_ZERO[this.schema.relName(type)] ?? []);
    type.fieldsArray.forEach((field, i) => {
      const l = layout[i]!;
      const kind = field.map ? 'map' : field.repeated ? 'repeated' : 'single';
      const slot: Slot = { name: field.name, json: l.json, kind, enc: () => undefined, dec: () => undefined };
      if (kind === 'single' && !field.resolvedType && omitZero.has(field.name)) slot.omitZero = true;
      if (l.inline && field.resolvedType instanceof protobuf.Type) slot.inline = this.plan(field.resolvedType);
      else this.valueCodec(field, slot);
      plan.slots.push(slot);
    });
    this.buildRoutes(plan, plan, []);
    plan.encode = (json) => this.encodeMessage(plan, json);
    plan.decode = (m: Message) => this.decodeLevel(plan, m);
  }

  /** A message one level deeper; past MAX_NESTING_DEPTH levels it is refused before recursing further. */
  private decodeLevel(plan: Plan, m: Message): Record<string, unknown> {
    if (this.level >= MAX_NESTING_DEPTH) return fail(new DepthError().message);
    this.level++;
    try {
      return this.decodeMessage(plan, m, {});
    } finally {
      this.level--;
    }
  }

  /** JSON key → path of inline hops and the slot holding it. */
  private buildRoutes(top: Plan, plan: Plan, hops: string[]): void {
    for (const slot of plan.slots) {
      if (slot.inline) this.buildRoutes(top, slot.inline, [...hops, slot.name]);
      else if (!top.routes.has(slot.json)) top.routes.set(slot.json, { hops, slot });
    }
  }

  private valueCodec(field: protobuf.Field, slot: Slot): void {
    const sub = field.resolvedType;
    let enc: Enc;
    let dec: Dec;
    if (sub instanceof protobuf.Type) {
      const subPlan = this.plan(sub);
      enc = (v) => subPlan.encode(v);
      dec = (v) => subPlan.decode(v);
    } else {
      enc = scalarEnc(field.type);
      dec = scalarDec(field.type);
    }
    if (slot.kind === 'repeated') {
      slot.enc = (v) =>
        Array.isArray(v) ? v.map((x, i) => at(i, enc, x)) : fail(`expected array, got ${describe(v)}`);
      slot.dec = (v: unknown[]) => (v.length === 0 ? undefined : v.map(dec));
    } else if (slot.kind === 'map') {
      slot.enc = (v) => {
        if (typeof v !== 'object' || Array.isArray(v)) return fail(`expected object, got ${describe(v)}`);
        const out: Record<string, unknown> = {};
        const map = v as Record<string, unknown>; // an object (checked above) or null, which has no keys
        for (const k in map) if (map[k] !== null && map[k] !== undefined) setOwn(out, k, at(k, enc, map[k]));
        return out;
      };
      slot.dec = (v: Record<string, unknown>) => {
        let out: Record<string, unknown> | undefined;
        for (const k in v) setOwn((out ??= {}), k, dec(v[k]));
        return out;
      };
    } else {
      slot.enc = enc;
      slot.dec = dec;
    }
  }

  private encodeMessage(plan: Plan, json: unknown): Record<string, unknown> {
    if (!isRecord(json)) return fail(`expected object, got ${describe(json)}`);
    const out: Message = {};
    for (const key in json) {
      const v = json[key];
      if (v === null || v === undefined) continue;
      const route = plan.routes.get(key);
      if (!route) continue;
      let target = out;
      // an inline hop holds the embedded message's object, created here
      for (const hop of route.hops) target = (target[hop] ??= {}) as Message;
      target[route.slot.name] = at(key, route.slot.enc, v);
    }
    return out;
  }

  private decodeMessage(plan: Plan, m: Message, out: Record<string, unknown>): Record<string, unknown> {
    for (const slot of plan.slots) {
      if (slot.inline) {
        // an inline slot's value is the embedded struct's message
        if (own.call(m, slot.name) && m[slot.name]) this.decodeMessage(slot.inline, m[slot.name] as Message, out);
        continue;
      }
      if (slot.kind === 'single' && !own.call(m, slot.name)) continue;
      const v = m[slot.name];
      if (v === null || v === undefined || (slot.omitZero && isZero(v))) continue;
      const j = slot.dec(v);
      if (j !== undefined) out[slot.json] = j;
    }
    return out;
  }

  /** Converters for apimachinery types whose JSON form is not an object of their fields. */
  private special(type: protobuf.Type): { enc: Enc; dec: Dec } | undefined {
    const rel = this.schema.relName(type);
    switch (rel) {
      case 'apimachinery.pkg.apis.meta.v1.Time':
        return { enc: (v) => parseTime(v, false), dec: (m: TimeMessage) => formatTime(m) };
      case 'apimachinery.pkg.apis.meta.v1.MicroTime':
        return { enc: (v) => parseTime(v, true), dec: (m: TimeMessage) => formatMicroTime(m) };
      case 'apimachinery.pkg.util.intstr.IntOrString':
        return {
          enc: (v) =>
            typeof v === 'string'
              ? { type: 1, strVal: v }
              : Number.isInteger(v)
                ? { type: 0, intVal: v }
                : fail('expected integer or string'),
          dec: (m: { type: number | LongLike; strVal?: string; intVal?: number }) =>
            toNumber(m.type) === 1 ? m.strVal : m.intVal,
        };
      case 'apimachinery.pkg.api.resource.Quantity':
      case 'apimachinery.pkg.api.resource.QuantityValue':
        return {
          enc: (v) =>
            typeof v === 'string'
              ? { string: v }
              : typeof v === 'number'
                ? { string: String(v) }
                : fail('expected quantity string'),
          dec: (m: { string?: string }) => (own.call(m, 'string') ? m.string : '0'),
        };
      case 'apimachinery.pkg.runtime.RawExtension':
        return { enc: rawJsonEnc('raw'), dec: rawJsonDec('raw', this.currentLevel, this.nested) };
      case 'apimachinery.pkg.apis.meta.v1.FieldsV1':
        return { enc: rawJsonEnc('Raw'), dec: rawJsonDec('Raw', this.currentLevel) };
    }
    return this.schemaUnion(type, rel) ?? itemsWrapper(type);
  }

  /** The apiextensions JSON and JSONSchemaPropsOr* types: one JSON value written as one of two fields. */
  private schemaUnion(type: protobuf.Type, rel: string): { enc: Enc; dec: Dec } | undefined {
    const sub = (name: string): Plan => this.plan(type.fields[name]!.resolvedType as protobuf.Type);
    if (/^apiextensions_apiserver\.pkg\.apis\.apiextensions\.v1(beta1)?\./.test(rel)) {
      switch (type.name) {
        case 'JSON':
          return { enc: rawJsonEnc('raw'), dec: rawJsonDec('raw', this.currentLevel) };
        case 'JSONSchemaPropsOrArray':
          return {
            enc: (v) =>
              Array.isArray(v)
                ? { jSONSchemas: v.map((x, i) => at(i, sub('jSONSchemas').encode, x)) }
                : { schema: sub('schema').encode(v) },
            dec: (m: { jSONSchemas?: unknown[]; schema?: unknown }) =>
              m.jSONSchemas?.length
                ? m.jSONSchemas.map(sub('jSONSchemas').decode)
                : m.schema
                  ? sub('schema').decode(m.schema)
                  : undefined,
          };
        case 'JSONSchemaPropsOrBool':
          return {
            enc: (v) => (typeof v === 'boolean' ? { allows: v } : { allows: true, schema: sub('schema').encode(v) }),
            dec: (m: { schema?: unknown; allows?: boolean }) =>
              m.schema ? sub('schema').decode(m.schema) : own.call(m, 'allows') ? m.allows : false,
          };
        case 'JSONSchemaPropsOrStringArray':
          return {
            enc: (v) =>
              Array.isArray(v)
                ? { property: v.map((x, i) => at(i, scalarEnc('string'), x)) }
                : { schema: sub('schema').encode(v) },
            dec: (m: { property?: string[]; schema?: unknown }) =>
              m.property?.length ? [...m.property] : m.schema ? sub('schema').decode(m.schema) : undefined,
          };
      }
    }
    return undefined;
  }
}

/** A message whose one field is a repeated scalar `items` (a Go named slice): its JSON form is the array. */
function itemsWrapper(type: protobuf.Type): { enc: Enc; dec: Dec } | undefined {
  const only = type.fieldsArray.length === 1 ? type.fieldsArray[0]! : undefined;
  if (only && only.name === 'items' && only.repeated && !only.resolvedType) {
    const enc = scalarEnc(only.type);
    const dec = scalarDec(only.type);
    return {
      enc: (v) =>
        Array.isArray(v) ? { items: v.map((x, i) => at(i, enc, x)) } : fail(`expected array, got ${describe(v)}`),
      dec: (m: { items?: unknown[] }) => (m.items ?? []).map(dec),
    };
  }
  return undefined;
}

/** The zero value of a scalar as protobufjs decodes it (Long for 64-bit integers, Uint8Array for bytes). */
function isZero(v: unknown): boolean {
  if (v === false || v === '' || v === 0) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  return (
    typeof v === 'object' && v !== null && (v as { low?: unknown }).low === 0 && (v as { high?: unknown }).high === 0
  );
}

/** Runs an encoder, recording the key or index in the error path. */
function at(key: string | number, enc: Enc, v: unknown): unknown {
  try {
    return enc(v);
  } catch (e) {
    if (e instanceof FieldError) e.path.unshift(typeof key === 'number' ? `[${key}]` : key);
    throw e;
  }
}
