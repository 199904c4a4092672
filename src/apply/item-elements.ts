/**
 * Path elements of list items: `k:<json keys>` for a list-map item, `v:<json value>` for a set
 * item, as upstream writes them, and a per-apply memo of them (one apply meets an item in
 * several walks).
 */
import { isRecord } from '../api/object.js';
import type { SchemaNode } from '../schema/schema.js';

/**
 * The key element of a list-map item, e.g. `k:{"name":"c"}` (keys sorted, as upstream); a key
 * field the item lacks takes its schema default when it has one (structured-merge-diff's rule).
 * Written as JSON.stringify writes the object of those fields, without building the object.
 */
export function keyElement(item: Record<string, unknown>, keys: string[], defaults?: Record<string, unknown>): string {
  const plan = keyPlan(keys);
  if (!plan) return objectKeyElement(item, keys, defaults);
  if (plan.byValue) {
    // one key with a string value (a name, as most list maps have): the element from the plan's table
    const v = item[plan.keys[0]!] ?? defaults?.[plan.keys[0]!];
    if (typeof v === 'string') return singleKeyElement(plan, v);
  }
  let s = '';
  for (let i = 0; i < plan.keys.length; i++) {
    const key = plan.keys[i]!;
    const v = item[key] ?? defaults?.[key];
    const json = v === undefined ? undefined : JSON.stringify(v);
    if (json !== undefined) s += (s ? ',' : '') + plan.names[i] + json;
  }
  return 'k:{' + s + '}';
}

function objectKeyElement(item: Record<string, unknown>, keys: string[], defaults?: Record<string, unknown>): string {
  const k: Record<string, unknown> = {};
  for (const key of [...keys].sort()) {
    const v = item[key] ?? defaults?.[key];
    if (v !== undefined) k[key] = v;
  }
  return 'k:' + JSON.stringify(k);
}

/**
 * A list map's keys sorted, each with its JSON name and colon; none when an object would order or
 * drop a key itself. byValue: for a single key, the elements of the string values met so far
 * (every apply meets the same names again: no JSON.stringify and concatenation per item, and
 * one string per element for the path keys interned after it). Only a cache, bounded.
 */
interface KeyPlan {
  keys: string[];
  names: string[];
  byValue?: Map<string, string>;
}
const MAX_ELEMENTS = 1024;

function singleKeyElement(plan: KeyPlan, v: string): string {
  const table = plan.byValue!;
  let e = table.get(v);
  if (e === undefined) {
    if (table.size >= MAX_ELEMENTS) table.clear();
    table.set(v, (e = 'k:{' + plan.names[0] + JSON.stringify(v) + '}'));
  }
  return e;
}
const plans = new WeakMap<string[], KeyPlan | null>();
// integer-like names come first in an object whatever their insertion order; __proto__ would set the prototype
const SPECIAL_KEY = /^(0|[1-9][0-9]*)$|^__proto__$/;

function keyPlan(keys: string[]): KeyPlan | undefined {
  let plan = plans.get(keys);
  if (plan === undefined) {
    const sortedKeys = [...keys].sort();
    plan = sortedKeys.some((k) => SPECIAL_KEY.test(k))
      ? null
      : {
          keys: sortedKeys,
          names: sortedKeys.map((k) => JSON.stringify(k) + ':'),
          byValue: sortedKeys.length === 1 ? new Map() : undefined,
        };
    plans.set(keys, plan);
  }
  return plan ?? undefined;
}

/**
 * Item elements already computed in the running withItemElements call, per item object: one
 * apply meets each applied item and each live item in two walks (typing and merge, merge and
 * comparison). Scoped to one call: items change between writes (defaulting), never within one.
 */
let memo: Map<object, [SchemaNode, string]> | undefined;

/** Runs fn with item elements remembered per item object (see memo); nested calls share the outer memo. */
export function withItemElements<T>(fn: () => T): T {
  if (memo) return fn();
  memo = new Map();
  try {
    return fn();
  } finally {
    memo = undefined;
  }
}

/** The path element of one item of a list-map or set list, or undefined when it has none. */
export function itemElement(item: unknown, s: SchemaNode, sh: 'listmap' | 'set'): string | undefined {
  return element(item, s, sh, true);
}

/** itemElement without remembering it, for an item no later walk of the running call meets again. */
export function itemElementOnce(item: unknown, s: SchemaNode, sh: 'listmap' | 'set'): string | undefined {
  return element(item, s, sh, false);
}

function element(item: unknown, s: SchemaNode, sh: 'listmap' | 'set', remember: boolean): string | undefined {
  if (sh === 'set') return 'v:' + JSON.stringify(item);
  if (!isRecord(item)) return undefined;
  const known = memo?.get(item);
  if (known && known[0] === s) return known[1];
  const e = keyElement(item, s.mapKeys!, s.keyDefaults);
  if (remember) memo?.set(item, [s, e]);
  return e;
}

/** The most items sameKeyOrder pairs (its duplicate check is quadratic). */
export const MAX_SAME_KEYS = 32;

/**
 * The items' elements when both lists hold the same distinct elements in the same order (at most
 * MAX_SAME_KEYS items), else undefined: the usual re-apply or update, where item i pairs with
 * item i and the merge (merge.ts) and the comparison (compare.ts) need no maps of them.
 * `appliedKey` keys an item of the second list (merge-tracked.ts passes itemElementOnce).
 */
export function sameKeyOrder(
  live: unknown[],
  applied: unknown[],
  s: SchemaNode,
  sh: 'listmap' | 'set',
  appliedKey: typeof itemElement = itemElement,
): string[] | undefined {
  const n = live.length;
  if (n !== applied.length || n > MAX_SAME_KEYS) return undefined;
  // sized once: a pushed array starts with room for 16 (≈ 110 bytes more for a list of 1–3 items)
  const keys = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const k = itemElement(live[i], s, sh);
    if (k === undefined || k !== appliedKey(applied[i], s, sh)) return undefined;
    for (let j = 0; j < i; j++) if (keys[j] === k) return undefined;
    keys[i] = k;
  }
  return keys;
}
