/**
 * Compile-time facts the direct wire encoders share (wire-encoder.ts from a parsed object,
 * text-encoder.ts from its JSON text): tags, wire types, which message types convert.ts gives a
 * special JSON form, and how JSON keys route to fields.
 */
import protobuf from 'protobufjs';
import type { ProtoSchema } from './schema.js';

/** protobufjs refuses deeper messages ("max depth exceeded"): left to it. */
export const MAX_DEPTH = (protobuf.util as { recursionLimit?: number }).recursionLimit ?? 100;
/** Wire types of the scalar types the built-in kinds use (others are left to protobufjs). */
export const WIRE_TYPE: Record<string, number> = { string: 2, bytes: 2, bool: 0, int32: 0, int64: 0, double: 1 };
/** A map entry's key field (1, length-delimited). */
export const KEY_TAG = Uint8Array.of(0x0a);
export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function tagBytes(id: number, wireType: number): Uint8Array {
  const out: number[] = [];
  let n = ((id << 3) | wireType) >>> 0;
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Uint8Array.from(out);
}

/** The tag of field `name` of a message type. */
export function fieldTag(type: protobuf.Type, name: string): Uint8Array {
  const f = type.fields[name]!;
  return tagBytes(f.id, WIRE_TYPE[f.type] ?? 2);
}

/** The special JSON forms of convert.ts (Converter.special); `delegate`: left to the converter and protobufjs. */
export type SpecialKind = 'time' | 'microTime' | 'intOrString' | 'quantity' | 'raw' | 'Raw' | 'delegate';

const SPECIAL: Record<string, SpecialKind> = {
  'apimachinery.pkg.apis.meta.v1.Time': 'time',
  'apimachinery.pkg.apis.meta.v1.MicroTime': 'microTime',
  'apimachinery.pkg.util.intstr.IntOrString': 'intOrString',
  'apimachinery.pkg.api.resource.Quantity': 'quantity',
  'apimachinery.pkg.api.resource.QuantityValue': 'quantity',
  'apimachinery.pkg.runtime.RawExtension': 'raw',
  'apimachinery.pkg.apis.meta.v1.FieldsV1': 'Raw',
};
const UNIONS = new Set(['JSONSchemaPropsOrArray', 'JSONSchemaPropsOrBool', 'JSONSchemaPropsOrStringArray']);

/** How convert.ts writes a message type when not as an object of its fields; undefined: as one. */
export function specialKind(schema: ProtoSchema, type: protobuf.Type): SpecialKind | undefined {
  const rel = schema.relName(type);
  const special = SPECIAL[rel];
  if (special) return special;
  if (/^apiextensions_apiserver\.pkg\.apis\.apiextensions\.v1(beta1)?\./.test(rel)) {
    if (type.name === 'JSON') return 'raw';
    if (UNIONS.has(type.name)) return 'delegate';
  }
  // a Go named slice (a message whose one field is a repeated scalar `items`): its JSON form is the array
  const only = type.fieldsArray.length === 1 ? type.fieldsArray[0]! : undefined;
  if (only && only.name === 'items' && only.repeated && !only.resolvedType) return 'delegate';
  return undefined;
}

/**
 * JSON key → where the field holding it sits (the inline hops' field names and its own), as
 * convert.ts routes keys: declaration order, inline members in place, the first one wins.
 */
export function routesOf(schema: ProtoSchema, top: protobuf.Type): Map<string, string> {
  const routes = new Map<string, string>();
  const visit = (type: protobuf.Type, path: string): void => {
    if (specialKind(schema, type)) return;
    const layout = schema.layout(type);
    type.fieldsArray.forEach((f, i) => {
      const l = layout[i]!;
      if (l.inline && f.resolvedType instanceof protobuf.Type) visit(f.resolvedType, `${path}${f.name}.`);
      else if (!routes.has(l.json)) routes.set(l.json, path + f.name);
    });
  };
  visit(top, '');
  return routes;
}

/** A message type's fields in field-number order with their JSON layout. */
export function orderedFields(
  schema: ProtoSchema,
  type: protobuf.Type,
): { f: protobuf.Field; json: string; inline: boolean }[] {
  const layout = schema.layout(type);
  return type.fieldsArray
    .map((f, i) => ({ f, json: layout[i]!.json, inline: layout[i]!.inline && f.resolvedType instanceof protobuf.Type }))
    .sort((a, b) => a.f.id - b.f.id);
}
