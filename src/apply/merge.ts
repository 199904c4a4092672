/**
 * Merging an applied configuration into the live object, by the schema's list and map types:
 * granular maps and structs merge field by field, list-maps by key, sets by value, and
 * everything atomic is replaced. Never mutates its inputs.
 */
import type { SchemaNode } from '../schema/schema.js';
import { ownValue, setOwn } from '../api/own-keys.js';
import { fieldSchema, itemElement, shape } from './fieldset.js';

/** A copy of an applied value (scalars are their own copy: no clone call for each leaf). */
const copy = <T>(v: T): T => (v !== null && typeof v === 'object' ? structuredClone(v) : v);

/** Merging an object onto an object of the same kind gives an object of that kind. */
export function mergeApplied<T extends object>(live: T | undefined, applied: T, schema: SchemaNode | undefined): T;
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown;
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown {
  const sh = shape(applied, schema);
  if (live === undefined || live === null || sh === 'leaf' || shape(live, schema) !== sh) return copy(applied);
  if (sh === 'fields') {
    const out: Record<string, unknown> = { ...(live as Record<string, unknown>) };
    for (const [k, v] of Object.entries(applied as Record<string, unknown>)) {
      if (v === null) {
        delete out[k];
        continue;
      }
      const sub = fieldSchema(schema, k);
      setOwn(out, k, mergeApplied(ownValue(out, k), v, sub ?? undefined));
    }
    return out;
  }
  return mergeItems(live as unknown[], applied as unknown[], schema!, sh);
}

/**
 * Upstream's associative-list merge: items shared by both lists take the applied order, items
 * only in the live list keep their place, new items go where the applied list puts them.
 */
function mergeItems(live: unknown[], applied: unknown[], s: SchemaNode, sh: 'listmap' | 'set'): unknown[] {
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
