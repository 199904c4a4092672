/**
 * A stored object's JSON text written straight to protobuf wire bytes, without parsing it into
 * an object: one pass (text-scan.ts) records the values of every JSON object's known keys on a
 * reused tape, then the fields are written in field-number order from the tape by the type's
 * compiled plan (text-plan.ts), with no object, closure call or string per value on the usual
 * path (plain ASCII strings, integers, nested messages). A list's first Protobuf encoding of an
 * entry costs neither JSON.parse nor its garbage, and raw JSON (managed fields' FieldsV1) is
 * copied from the text instead of stringified again.
 *
 * Contract: the text is JSON.stringify's output for the object (cache entries' json is, see
 * registry/read-store.ts entryOf): compact, keys in the object's own order, so a sub-value's
 * span is its stringified JSON and a map's keys come in Object.keys order. The bytes are then
 * those of wire-encoder.ts for the parsed object (and so protobufjs' for the converter's
 * message). Anything else (a value of the wrong type, a null array element, whitespace, a
 * delegated type's refusal) makes `encode` answer undefined: the caller encodes the parsed object.
 */
import type protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';
import * as w from './wire-writer.js';
import * as t from './text-scan.js';
import {
  KIND_BOOL,
  KIND_BYTES,
  KIND_DOUBLE,
  KIND_INT32,
  KIND_INT64,
  KIND_MESSAGE,
  KIND_SPECIAL,
  KIND_STRING,
  MODE_MAP,
  MODE_SINGLE,
  type Node,
  type Plan,
  PlanCompiler,
} from './text-plan.js';
import { boolToken, bytesToken, integerToken, numberToken, specialWrite, stringToken } from './text-values.js';
import { MAX_DEPTH } from './wire-plan.js';

const fail = w.fallback;

/** the tape of the message being written */
let T = t.tape;

/** An object's JSON text opening with its kind. */
const KIND_FIRST = /^\{"kind":"([A-Za-z0-9]+)"/;

export class TextWireEncoder {
  private readonly compiler: PlanCompiler;
  private last?: { apiVersion: string; opening: string; type: protobuf.Type };

  constructor(schema: ProtoSchema, delegate: (type: protobuf.Type, v: unknown) => Uint8Array) {
    this.compiler = new PlanCompiler(schema, (type, kind) => specialWrite(type, kind, delegate));
  }

  /**
   * The message type of a text's kind (its first member: JSON.stringify of a stored object opens
   * with it) as apiVersion; the last one is remembered (a list's items share it).
   */
  typeOf(
    text: string,
    apiVersion: string,
    lookup: (group: string, version: string, kind: string) => protobuf.Type | undefined,
  ): protobuf.Type | undefined {
    const last = this.last;
    if (last && apiVersion === last.apiVersion && text.startsWith(last.opening)) return last.type;
    const kind = KIND_FIRST.exec(text)?.[1];
    if (!kind || !apiVersion) return undefined;
    const slash = apiVersion.indexOf('/');
    const type = lookup(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
    if (type) this.last = { apiVersion, opening: `{"kind":"${kind}"`, type };
    return type;
  }

  /** The bare message of `type` for an object's JSON text, or undefined when the caller must parse it. */
  encode(type: protobuf.Type, text: string, ascii = false): Uint8Array | undefined {
    return this.encodeFrom(type, text, ascii);
  }

  /** As encode, from the text's UTF-8 bytes (a well-formed text's: encode-helper.ts). */
  encodeBytes(type: protobuf.Type, bytes: Uint8Array): Uint8Array | undefined {
    return this.encodeFrom(type, bytes);
  }

  private encodeFrom(type: protobuf.Type, text: string | Uint8Array, ascii = false): Uint8Array | undefined {
    try {
      const plan = this.compiler.plan(type);
      if (typeof text === 'string') t.begin(text, ascii);
      else t.beginBytes(text);
      const rec = t.readRecord(plan);
      if (!t.atEnd()) return undefined;
      T = t.tape;
      w.reset();
      writeNode(plan, plan.node, rec, 0);
      return w.take();
    } catch {
      return undefined;
    }
  }
}

/** Whether a slot holds a value: [0, 0] is absent; an empty list ([0, -1]) is present. */
const present = (at: number): boolean => T[at] !== 0 || T[at + 1] !== 0;

function writeNode(plan: Plan, node: Node, rec: number, depth: number): void {
  const fields = node.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const slot = f.slot;
    if (slot >= 0) {
      const at = rec + 2 * slot;
      if (T[at] !== 0) writeSlot(plan, slot, at, depth);
    } else if (anyPresent(f.slots, rec)) {
      // an embedded struct: a message of its own on the wire, written when one of its keys is set
      if (depth >= MAX_DEPTH) fail();
      w.tag(f.tag);
      const start = w.open();
      writeNode(plan, f.node!, rec, depth + 1);
      w.close(start);
    }
  }
}

function anyPresent(slots: number[], rec: number): boolean {
  for (let i = 0; i < slots.length; i++) if (present(rec + 2 * slots[i]!)) return true;
  return false;
}

/** A present slot with its tag(s): one value, each element of a list, or each entry of a map. */
function writeSlot(plan: Plan, slot: number, at: number, depth: number): void {
  const mode = plan.modes[slot]!;
  const tag = plan.tags[slot]!;
  if (mode === MODE_SINGLE) {
    w.tag(tag);
    writeValue(plan, slot, T[at]!, T[at + 1]!, depth);
    return;
  }
  const map = mode === MODE_MAP;
  const valueTag = plan.valueTags[slot]!;
  for (let link = T[at]!; link !== 0; ) {
    const node = link - 1;
    w.tag(tag);
    if (map) {
      const start = w.open();
      w.tag(0x0a); // the entry's key, field 1
      const ks = T[node + 3]!;
      const ke = T[node + 4]!;
      if (!w.utf8Token(t.src, ks, ke)) w.string(t.stringOf(ks - 1, ke + 1));
      w.tag(valueTag);
      // protobufjs encodes a map's message value one level deeper than the map's own message
      writeValue(plan, slot, T[node + 1]!, T[node + 2]!, depth);
      w.close(start);
    } else writeValue(plan, slot, T[node + 1]!, T[node + 2]!, depth);
    link = T[node]!;
  }
}

/** One value without its tag: a: the token's start + 1 (a message: its record + 1), b: its end. */
function writeValue(plan: Plan, slot: number, a: number, b: number, depth: number): void {
  const s = a - 1;
  switch (plan.kinds[slot]) {
    case KIND_MESSAGE: {
      if (depth >= MAX_DEPTH) fail();
      const sub = plan.subs[slot]!;
      const start = w.open();
      writeNode(sub, sub.node, s, depth + 1);
      w.close(start);
      return;
    }
    case KIND_STRING:
      return stringToken(s, b);
    case KIND_INT64:
      return w.int64(integerToken(s, b));
    case KIND_INT32:
      return w.int32(integerToken(s, b));
    case KIND_BOOL:
      return w.bool(boolToken(s, b));
    case KIND_SPECIAL: {
      if (depth >= MAX_DEPTH) fail();
      const start = w.open();
      plan.specials[slot]!(s, b);
      w.close(start);
      return;
    }
    case KIND_DOUBLE:
      return w.double(numberToken(s, b));
    case KIND_BYTES:
      return bytesToken(s, b);
  }
  fail();
}
