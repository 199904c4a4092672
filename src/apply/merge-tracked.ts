/**
 * The merge of an applied configuration (merge.ts mergeApplied) and its tracked field set
 * (tracked-paths.ts appliedFieldSet) in one walk: the merge already visits every field and item
 * of the applied configuration with its schema, so the set's paths are recorded on the way
 * instead of walking the configuration a second time. The same results as the two functions,
 * members in the same order and repeated keys noted in the same order: where the merge does not
 * descend (a value copied or kept whole, a list merged by the general algorithm, metadata), the
 * set's own walk records that value's part.
 */
import type { SchemaNode } from '../schema/schema.js';
import { FieldSet, fieldKey, fieldSchema, hasNoKeys, isObj, joinKey, shape } from './fieldset.js';
import { itemElementOnce, sameKeyOrder } from './item-elements.js';
import { copy, mergeApplied, mergeItemsByKey, putMerged, sameItems, sameJson } from './merge.js';
import { metadataFields, topTracked, walk as setWalk } from './tracked-paths.js';

export interface TrackedMerge {
  merged: Record<string, unknown>;
  set: FieldSet;
}

/**
 * { merged: mergeApplied(base, applied, schema), set: appliedFieldSet(applied, schema, sub, repeats) },
 * or undefined when either is not a granular object (the caller then calls those two).
 */
export function mergeTracked(
  base: Record<string, unknown>,
  applied: unknown,
  schema: SchemaNode | undefined,
  sub: string | undefined,
  repeats: string[],
): TrackedMerge | undefined {
  if (shape(applied, schema) !== 'fields' || shape(base, schema) !== 'fields') return undefined;
  const out = new FieldSet();
  const a = applied as Record<string, unknown>;
  let merged: Record<string, unknown> | undefined;
  for (const k of Object.keys(a)) {
    const v = a[k];
    const s = fieldSchema(schema, k);
    const p = s === null ? '' : fieldKey('', k);
    const cur = merged ?? base;
    const had = Object.hasOwn(cur, k);
    const was = had ? cur[k] : undefined;
    let next: unknown;
    if (s === null) next = v === null ? undefined : mergeApplied(was, v, undefined);
    else if (k === 'metadata' && topTracked(p, sub) && shape(v, s) === 'fields') {
      // system metadata is not tracked: its part of the set by the set's own walk (a few fields)
      metadataFields(v as Record<string, unknown>, s, p, out, repeats);
      next = mergeApplied(was, v, s);
    } else {
      const to = k !== 'metadata' && topTracked(p, sub) ? out : undefined;
      next = v === null ? undefined : value(was, v, s, p, to, repeats);
      if (to && (v === null || schema?.kind !== 'struct' || (isObj(v) && hasNoKeys(v)))) to.addKey(p);
    }
    merged = putMerged(merged, base, had, was, k, v, next);
  }
  return { merged: merged ?? base, set: out };
}

/** mergeApplied(live, applied, s), recording applied's paths under `p` in `out` (none when undefined). */
function value(
  live: unknown,
  applied: unknown,
  s: SchemaNode | undefined,
  p: string,
  out: FieldSet | undefined,
  repeats: string[],
): unknown {
  const sh = shape(applied, s);
  if (live === applied || live === undefined || live === null || shape(live, s) !== sh) {
    setWalk(applied, s, p, out, repeats);
    return live === applied ? live : copy(applied);
  }
  if (sh === 'leaf') {
    out?.addKey(p);
    return sameJson(live, applied) ? live : copy(applied);
  }
  if (sh === 'fields')
    return fields(live as Record<string, unknown>, applied as Record<string, unknown>, s, p, out, repeats);
  const merged = items(live as unknown[], applied as unknown[], s!, sh, p, out, repeats);
  return sameItems(merged, live as unknown[]) ? live : merged;
}

/** merge.ts mergeFields, recording each field as tracked-paths.ts field() does. */
function fields(
  live: Record<string, unknown>,
  applied: Record<string, unknown>,
  schema: SchemaNode | undefined,
  p: string,
  out: FieldSet | undefined,
  repeats: string[],
): Record<string, unknown> {
  let merged: Record<string, unknown> | undefined;
  for (const k in applied) {
    const v = applied[k];
    const s = fieldSchema(schema, k);
    const cur = merged ?? live;
    const had = Object.hasOwn(cur, k);
    const was = had ? cur[k] : undefined;
    let next: unknown;
    // a field the schema does not declare: merged as merge.ts does, nothing recorded (as fieldsOf)
    if (s === null) next = v === null ? undefined : mergeApplied(was, v, undefined);
    else {
      const kp = fieldKey(p, k);
      next = v === null ? undefined : value(was, v, s, kp, out, repeats);
      if (out && (v === null || schema?.kind !== 'struct' || (isObj(v) && hasNoKeys(v)))) out.addKey(kp);
    }
    merged = putMerged(merged, live, had, was, k, v, next);
  }
  return merged ?? live;
}

/**
 * merge.ts mergeItems, recording the list's part of the set: item by item where both lists hold
 * the same distinct keys in the same order (mergeSameKeys: no repeats), else by the set's own
 * walk beside the general merge.
 */
function items(
  live: unknown[],
  applied: unknown[],
  s: SchemaNode,
  sh: 'listmap' | 'set',
  p: string,
  out: FieldSet | undefined,
  repeats: string[],
): unknown[] {
  // an applied item is met by this walk only (the merge copies what it takes of it): no memo
  const keys = sameKeyOrder(live, applied, s, sh, itemElementOnce);
  if (keys === undefined) {
    setWalk(applied, s, p, out, repeats);
    return mergeItemsByKey(live, applied, s, sh);
  }
  // map: the merged list (kept in the stored object) sized exactly, not a pushed array's room for 16
  return keys.map((k, i) => {
    const ip = joinKey(p, k);
    const v = sh === 'set' ? copy(applied[i]) : value(live[i], applied[i], s.elem, ip, out, repeats);
    out?.addKey(ip);
    return v;
  });
}
