/**
 * Merging an applied configuration into the live object, by the schema's list and map types:
 * granular maps and structs merge field by field, list-maps by key, sets by value, and
 * everything atomic is replaced. Never mutates its inputs.
 */
import type { SchemaNode } from '../schema/schema.js';
import { setOwn } from '../api/own-keys.js';
import { fieldSchema, itemElement, shape } from './fieldset.js';
import { sameKeyOrder } from './item-elements.js';

/** A copy of an applied value (scalars are their own copy: no clone call for each leaf). */
export const copy = <T>(v: T): T => (v !== null && typeof v === 'object' ? structuredClone(v) : v);

/** Merging an object onto an object of the same kind gives an object of that kind. */
export function mergeApplied<T extends object>(live: T | undefined, applied: T, schema: SchemaNode | undefined): T;
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown;
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown {
  // a scalar applied as it is: the live value itself (no copy, and the comparison stops here)
  if (live === applied) return live;
  const sh = shape(applied, schema);
  if (live === undefined || live === null || shape(live, schema) !== sh) return copy(applied);
  // an atomic value: replaced, unless it is the same JSON (key order included) as the live one
  if (sh === 'leaf') return sameJson(live, applied) ? live : copy(applied);
  if (sh === 'fields') return mergeFields(live as Record<string, unknown>, applied as Record<string, unknown>, schema);
  const out = mergeItems(live as unknown[], applied as unknown[], schema!, sh);
  return sameItems(out, live as unknown[]) ? live : out;
}

/**
 * A struct or granular map merged field by field. When nothing in it changes, the live object
 * itself: the result then shares every unchanged subtree with the live object, which the
 * comparison, validation and the no-op check skip by reference (same keys in the same order,
 * so the same JSON).
 */
function mergeFields(
  live: Record<string, unknown>,
  applied: Record<string, unknown>,
  schema: SchemaNode | undefined,
): Record<string, unknown> {
  // the copy is made at the first change (most merged structs of an apply change nothing)
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(applied)) {
    const v = applied[k];
    const cur = out ?? live;
    const had = Object.hasOwn(cur, k);
    const was = had ? cur[k] : undefined;
    const next = v === null ? undefined : mergeApplied(was, v, fieldSchema(schema, k) ?? undefined);
    out = putMerged(out, live, had, was, k, v, next);
  }
  return out ?? live;
}

/**
 * A field-by-field merge's step for member k: `next` merged from applied value `v` (v null: the
 * member is removed); answers the copy of `live` made at the first change, or `merged` as it
 * was while nothing changed (merge-tracked.ts walks the same way).
 */
export function putMerged(
  merged: Record<string, unknown> | undefined,
  live: Record<string, unknown>,
  had: boolean,
  was: unknown,
  k: string,
  v: unknown,
  next: unknown,
): Record<string, unknown> | undefined {
  if (v === null) {
    if (!had) return merged;
    const out = merged ?? { ...live };
    delete out[k];
    return out;
  }
  if (next === was && had) return merged;
  const out = merged ?? { ...live };
  setOwn(out, k, next);
  return out;
}

export function sameItems(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Upstream's associative-list merge: items shared by both lists take the applied order, items
 * only in the live list keep their place, new items go where the applied list puts them.
 */
function mergeItems(live: unknown[], applied: unknown[], s: SchemaNode, sh: 'listmap' | 'set'): unknown[] {
  return mergeSameKeys(live, applied, s, sh) ?? mergeItemsByKey(live, applied, s, sh);
}

/**
 * The usual re-apply: both lists hold the same distinct keys in the same order. mergeItemsByKey
 * then pairs item i with item i, which this does without its maps and sets; undefined otherwise.
 */
function mergeSameKeys(
  live: unknown[],
  applied: unknown[],
  s: SchemaNode,
  sh: 'listmap' | 'set',
): unknown[] | undefined {
  if (sameKeyOrder(live, applied, s, sh) === undefined) return undefined;
  // sized exactly (the merged list is kept in the stored object): applied is a parsed list, without holes
  return applied.map((a, i) => (sh === 'set' ? copy(a) : mergeApplied(live[i], a, s.elem)));
}

/** mergeItems in general (exported for tests: what mergeSameKeys must agree with). */
export function mergeItemsByKey(live: unknown[], applied: unknown[], s: SchemaNode, sh: 'listmap' | 'set'): unknown[] {
  const key = (x: unknown) => itemElement(x, s, sh);
  const lhs = live.map(key);
  const rhs = applied.map(key);
  const lhsSet = new Map<string, unknown>();
  live.forEach((x, i) => {
    if (lhs[i] !== undefined && !lhsSet.has(lhs[i]!)) lhsSet.set(lhs[i]!, x);
  });
  const rhsSet = new Set(rhs.filter((x): x is string => x !== undefined));
  const shared = rhs.filter((k) => k !== undefined && lhsSet.has(k));
  let next = shared.shift();
  const merged = new Set<string>();
  const out: unknown[] = [];
  const take = (k: string | undefined, r: unknown) => {
    if (k !== undefined) merged.add(k);
    const l = k !== undefined ? lhsSet.get(k) : undefined;
    out.push(sh === 'set' || l === undefined ? copy(r) : mergeApplied(l, r, s.elem));
  };
  for (let li = 0, ri = 0; li < lhs.length || ri < rhs.length; ) {
    if (li < lhs.length && ri < rhs.length) {
      if (lhs[li] !== undefined && lhs[li] === rhs[ri]) {
        take(rhs[ri], applied[ri]);
        li++;
        ri++;
        next = shared.shift();
        continue;
      }
      if (lhs[li] !== undefined && rhsSet.has(lhs[li]!) && next !== undefined && next !== lhs[li]) {
        li++;
        continue;
      }
    }
    if (li < lhs.length) {
      const k = lhs[li];
      if (k === undefined || !rhsSet.has(k)) {
        out.push(live[li]);
        li++;
        continue;
      }
      if (merged.has(k)) {
        li++;
        continue;
      }
    }
    if (ri < rhs.length) {
      const k = rhs[ri];
      take(k, applied[ri]);
      ri++;
      if (next !== undefined && next === k) next = shared.shift();
    }
  }
  return out;
}

/** The same JSON text: equal values, object keys in the same order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
