/**
 * What field ownership tracks, decided on a path's first two elements, and the applied
 * configuration's tracked field set built in the one walk that also finds its repeated list
 * keys (no second walk, no set of every path filtered afterwards).
 */
import type { SchemaNode } from '../schema/schema.js';
import {
  FieldSet,
  fieldKey,
  fieldSchema,
  hasNoKeys,
  isObj,
  itemElement,
  joinKey,
  pathString,
  SEP,
  shape,
} from './fieldset.js';

const IGNORED = new Set(['f:apiVersion', 'f:kind']);
export const IGNORED_META = new Set([
  'f:name',
  'f:namespace',
  'f:uid',
  'f:resourceVersion',
  'f:generation',
  'f:creationTimestamp',
  'f:managedFields',
  'f:deletionTimestamp',
  'f:deletionGracePeriodSeconds',
  'f:selfLink',
]);

/** IGNORED_META by field name (no `f:` element built to look one up) */
export const IGNORED_META_NAMES: ReadonlySet<string> = new Set([...IGNORED_META].map((f) => f.slice(2)));

/**
 * Whether a path starting with top-level element `first` may be tracked: not identity or type;
 * for writes to the main resource not status (every stored kind with a status has a status
 * subresource, and its strategy resets status on main-resource writes); for the status
 * subresource only status (its strategy keeps the rest).
 */
export function topTracked(first: string, sub: string | undefined): boolean {
  return !IGNORED.has(first) && (sub === 'status' ? first === 'f:status' : !!sub || first !== 'f:status');
}

/** Whether ownership tracks a path (its first two elements; `second` undefined for a one-element path). */
export function isTracked(first: string, second: string | undefined, sub: string | undefined): boolean {
  return topTracked(first, sub) && !(first === 'f:metadata' && (second === undefined || IGNORED_META.has(second)));
}

/** The set without the paths ownership never tracks (see isTracked). */
export function tracked(set: FieldSet, sub?: string): FieldSet {
  return set.filter((first, second) => isTracked(first, second, sub));
}

/**
 * tracked(fieldsOf(applied, schema), sub), checking on the way that no list-map repeats a key
 * and no set list a value (in every field, tracked or not: upstream types the whole applied
 * configuration). `repeats` gets one line per repeat, in walk order.
 */
export function appliedFieldSet(
  applied: unknown,
  schema: SchemaNode | undefined,
  sub: string | undefined,
  repeats: string[],
): FieldSet {
  const out = new FieldSet();
  if (shape(applied, schema) !== 'fields') {
    walk(applied, schema, '', out, repeats);
    return tracked(out, sub);
  }
  const obj = applied as Record<string, unknown>;
  for (const k in obj) {
    const v = obj[k];
    const s = fieldSchema(schema, k);
    if (s === null) continue;
    const p = fieldKey('', k);
    if (k !== 'metadata' || !topTracked(p, sub) || shape(v, s) !== 'fields') {
      // the metadata path itself is never tracked, whatever it holds (isTracked)
      field(v, s, schema, p, k !== 'metadata' && topTracked(p, sub) ? out : undefined, repeats);
      continue;
    }
    metadataFields(v as Record<string, unknown>, s, p, out, repeats);
  }
  return out;
}

/** The applied set's part in a granular metadata field `p` of schema `s`: its fields but system metadata. */
export function metadataFields(
  meta: Record<string, unknown>,
  s: SchemaNode | undefined,
  p: string,
  out: FieldSet,
  repeats: string[],
): void {
  for (const m in meta) {
    const ms = fieldSchema(s, m);
    if (ms !== null) field(meta[m], ms, s, fieldKey(p, m), IGNORED_META_NAMES.has(m) ? undefined : out, repeats);
  }
}

/** One field of a granular value as fieldsOf walks it: its paths, then the field itself where upstream records it. */
function field(
  v: unknown,
  s: SchemaNode | undefined,
  parent: SchemaNode | undefined,
  p: string,
  out: FieldSet | undefined,
  repeats: string[],
): void {
  walk(v, s, p, out, repeats);
  if (out && (v === null || parent?.kind !== 'struct' || (isObj(v) && hasNoKeys(v)))) out.addKey(p);
}

/** fieldsOf into `out` (nothing recorded when undefined), noting repeated list keys. */
export function walk(
  value: unknown,
  schema: SchemaNode | undefined,
  prefix: string,
  out: FieldSet | undefined,
  repeats: string[],
): void {
  const sh = shape(value, schema);
  if (sh === 'leaf') {
    out?.addKey(prefix);
    return;
  }
  if (sh === 'fields') {
    for (const k in value as Record<string, unknown>) {
      const sub = fieldSchema(schema, k);
      if (sub !== null) field((value as Record<string, unknown>)[k], sub, schema, fieldKey(prefix, k), out, repeats);
    }
    return;
  }
  const seen = new Set<string>();
  for (const item of value as unknown[]) {
    const e = itemElement(item, schema!, sh);
    if (e === undefined) continue;
    if (seen.has(e))
      repeats.push(`${pathString(prefix ? prefix.split(SEP) : [])}: duplicate entries for key ${pathString([e])}`);
    seen.add(e);
    const p = joinKey(prefix, e);
    if (sh === 'listmap') walk(item, schema!.elem, p, out, repeats);
    out?.addKey(p);
  }
}
