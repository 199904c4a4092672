/**
 * The compiled form text-encoder.ts reads and writes a message type by: per type, its routed JSON
 * keys as numbered slots (what text-scan.ts records on its tape), each slot's kind, mode and tag
 * bytes in flat arrays, and the write program (the fields in field-number order, Go embedded
 * structs as nested programs over the same slots). Compiled once per type, sub-messages included
 * (a type reaching itself shares its plan).
 */
import protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';
import { orderedFields, routesOf, specialKind, tagBytes, WIRE_TYPE, type SpecialKind } from './wire-plan.js';

/** Slot kinds: what a value is read and written as. */
export const KIND_FAIL = 0;
export const KIND_STRING = 1;
export const KIND_BOOL = 2;
export const KIND_INT32 = 3;
export const KIND_INT64 = 4;
export const KIND_DOUBLE = 5;
export const KIND_BYTES = 6;
export const KIND_MESSAGE = 7;
/** a special apimachinery form: a message whose content `specials[slot]` writes from the value's token */
export const KIND_SPECIAL = 8;

export const MODE_SINGLE = 0;
export const MODE_REPEATED = 1;
export const MODE_MAP = 2;

/** Writes a special form's content from the token src[start, end). */
export type SpecialWrite = (start: number, end: number) => void;

export interface Field {
  /** a leaf's slot; -1: an embedded struct (`node`) */
  slot: number;
  /** an embedded struct's tag (packed, see packTag) */
  tag: number;
  node: Node | undefined;
  /** an embedded struct's slots: written when one of them is present */
  slots: number[];
}
export interface Node {
  fields: Field[];
}

export interface Plan {
  n: number;
  /** slot → JSON key */
  keys: string[];
  all: Map<string, number>;
  /** key length × 65536 + first char → slots */
  byShape: Map<number, number[]>;
  /** slot (n: the object's start) → the slot read after it last time, -1 none yet */
  next: Int32Array;
  /** slot → whether its key is ASCII with no char JSON escapes: matched by its bytes (text-scan.ts readKey) */
  plain: boolean[];
  /** the keys' bytes, slot i's at keyAt[i] (meaningful for plain keys) */
  keyBytes: Uint8Array;
  keyAt: number[];
  kinds: number[];
  modes: number[];
  tags: number[];
  /** a map's value tag (field 2) */
  valueTags: number[];
  subs: (Plan | undefined)[];
  specials: (SpecialWrite | undefined)[];
  node: Node;
}

/** Tag bytes (at most 4: field numbers below 2^25) packed low byte first; none is 0, so the packing ends at the first 0. */
export function packTag(id: number, wireType: number): number {
  const b = tagBytes(id, wireType);
  if (b.length > 4) throw new Error(`protobuf: field number ${id} too large`);
  let v = 0;
  for (let i = b.length - 1; i >= 0; i--) v = v * 256 + b[i]!;
  return v;
}

const SCALAR_KIND: Record<string, number> = {
  string: KIND_STRING,
  bool: KIND_BOOL,
  int32: KIND_INT32,
  int64: KIND_INT64,
  double: KIND_DOUBLE,
  bytes: KIND_BYTES,
};

export class PlanCompiler {
  private readonly plans = new Map<protobuf.Type, Plan>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly special: (type: protobuf.Type, kind: SpecialKind) => SpecialWrite,
  ) {}

  plan(type: protobuf.Type): Plan {
    let plan = this.plans.get(type);
    if (!plan) {
      plan = {
        n: 0,
        keys: [],
        all: new Map(),
        byShape: new Map(),
        next: new Int32Array(0),
        plain: [],
        keyBytes: new Uint8Array(0),
        keyAt: [],
        kinds: [],
        modes: [],
        tags: [],
        valueTags: [],
        subs: [],
        specials: [],
        node: { fields: [] },
      };
      this.plans.set(type, plan);
      plan.node = this.node(plan, type, routesOf(this.schema, type), '');
      plan.next = new Int32Array(plan.n + 1).fill(-1);
      plan.keyBytes = Buffer.from(plan.keys.join(''), 'latin1');
      let at = 0;
      for (const k of plan.keys) {
        plan.keyAt.push(at);
        at += k.length;
      }
    }
    return plan;
  }

  private node(plan: Plan, type: protobuf.Type, routes: Map<string, string>, path: string): Node {
    const fields: Field[] = [];
    for (const { f, json, inline } of orderedFields(this.schema, type)) {
      if (inline) {
        const sub = f.resolvedType as protobuf.Type;
        if (specialKind(this.schema, sub)) continue;
        const node = this.node(plan, sub, routes, `${path}${f.name}.`);
        const slots = nodeSlots(node);
        if (slots.length) fields.push({ slot: -1, tag: packTag(f.id, 2), node, slots });
        continue;
      }
      if (routes.get(json) !== path + f.name) continue;
      fields.push({ slot: this.slot(plan, json, f), tag: 0, node: undefined, slots: [] });
    }
    return { fields };
  }

  /** A new slot of plan for field f under JSON key `json`. */
  private slot(plan: Plan, json: string, f: protobuf.Field): number {
    const slot = plan.n++;
    plan.keys.push(json);
    plan.all.set(json, slot);
    // readKey compares a predicted key's raw chars with the text: only keys JSON writes as they are
    plan.plain.push(/^[\u0020-\u007f]*$/.test(json) && !/["\\]/.test(json));
    const shape = json.length * 65536 + (json.charCodeAt(0) || 0);
    const list = plan.byShape.get(shape) ?? [];
    list.push(slot);
    plan.byShape.set(shape, list);
    let mode = f.map ? MODE_MAP : f.repeated ? MODE_REPEATED : MODE_SINGLE;
    let kind = this.kind(f.type, f.resolvedType);
    if (f.map && !(f instanceof protobuf.MapField && f.keyType === 'string')) kind = KIND_FAIL;
    if (!f.map && f.repeated && f.packed && !f.resolvedType) kind = KIND_FAIL;
    if (kind === KIND_FAIL) mode = MODE_SINGLE; // read fails when the key holds a value
    const wire = WIRE_TYPE[f.type] ?? 2;
    plan.kinds.push(kind);
    plan.modes.push(mode);
    plan.tags.push(packTag(f.id, f.map ? 2 : wire));
    plan.valueTags.push(f.map ? packTag(2, wire) : 0);
    const sub = f.resolvedType instanceof protobuf.Type ? f.resolvedType : undefined;
    const special = sub ? specialKind(this.schema, sub) : undefined;
    plan.subs.push(kind === KIND_MESSAGE ? this.plan(sub!) : undefined);
    plan.specials.push(special && sub ? this.special(sub, special) : undefined);
    return slot;
  }

  private kind(type: string, resolved: protobuf.ReflectionObject | null): number {
    if (resolved instanceof protobuf.Type) return specialKind(this.schema, resolved) ? KIND_SPECIAL : KIND_MESSAGE;
    if (resolved) return KIND_FAIL; // enums: none in the built-in kinds
    return SCALAR_KIND[type] ?? KIND_FAIL;
  }
}

function nodeSlots(node: Node): number[] {
  return node.fields.flatMap((f) => (f.node ? f.slots : [f.slot]));
}
