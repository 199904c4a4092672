/**
 * Where a built-in kind holds resource.Quantity values, and their canonicalization on decode.
 * Upstream decodes every Quantity field into a Go resource.Quantity and encodes it back with
 * String(), so a stored or served object never shows the client's spelling ("1000m" is "1"),
 * and an unparseable quantity fails the decode (400). The plan is compiled once per kind from
 * its structural schema and holds only the paths that lead to a Quantity, so a write walks
 * nothing else, and kinds without quantities (ConfigMap, Secret, ...) have no plan at all.
 */
import { canonicalQuantity } from '../api/quantity.js';
import type { SchemaNode } from './schema.js';
import { ownValue, setOwn } from '../api/own-keys.js';

export type QuantityPlan =
  | { at: 'value' }
  | { at: 'struct'; fields: [string, QuantityPlan][] }
  | { at: 'map'; elem: QuantityPlan }
  | { at: 'list'; elem: QuantityPlan };

const VALUE: QuantityPlan = { at: 'value' };
/** null: the node holds no quantity; memoized per compiled node (the schema index shares them) */
const plans = new WeakMap<SchemaNode, QuantityPlan | null>();

/**
 * The Quantity-bearing paths under a schema node, or undefined when there are none. A node
 * met again while its own plan is being compiled (a recursive definition) adds nothing there:
 * no recursive reference definition holds a Quantity.
 */
export function quantityPlan(node: SchemaNode | undefined, visiting = new Set<SchemaNode>()): QuantityPlan | undefined {
  if (!node) return undefined;
  const known = plans.get(node);
  if (known !== undefined) return known ?? undefined;
  if (visiting.has(node)) return undefined;
  visiting.add(node);
  const plan = compile(node, visiting);
  visiting.delete(node);
  plans.set(node, plan ?? null);
  return plan;
}

function compile(node: SchemaNode, visiting: Set<SchemaNode>): QuantityPlan | undefined {
  if (node.quantity) return VALUE;
  if (node.kind === 'struct') {
    const fields: [string, QuantityPlan][] = [];
    for (const [k, v] of Object.entries(node.props ?? {})) {
      const p = quantityPlan(v, visiting);
      if (p) fields.push([k, p]);
    }
    return fields.length ? { at: 'struct', fields } : undefined;
  }
  if (node.kind === 'map' || node.kind === 'list') {
    const elem = quantityPlan(node.elem, visiting);
    return elem ? { at: node.kind, elem } : undefined;
  }
  return undefined;
}

/**
 * The value with every quantity on the plan's paths in upstream's canonical string, copy on
 * write: a node is copied only when something under it changes, and a value with nothing to
 * change is answered itself. It never writes into its input, so it may run on an object that
 * shares unchanged subtrees with the cached one (a patch merges onto the stored object). A value
 * that is no quantity calls fail with upstream's parse error. Values of another shape than the
 * schema's are left to validation. A null map value decodes to the zero Quantity ("0") as
 * upstream; a null field is left for the passes that drop nulls.
 */
export function canonicalizeQuantities<T>(obj: T, plan: QuantityPlan, fail: (message: string) => never): T {
  if (plan.at === 'struct') return isObject(obj) ? (struct(obj, plan.fields, fail) as T) : obj;
  if (plan.at === 'map') return isObject(obj) ? (map(obj, plan.elem, fail) as T) : obj;
  if (plan.at === 'list' && Array.isArray(obj)) return list(obj, plan.elem, fail) as T;
  return obj;
}

function struct(
  obj: Record<string, unknown>,
  fields: [string, QuantityPlan][],
  fail: (message: string) => never,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [k, p] of fields) {
    const v = ownValue(obj, k);
    if (v === undefined || v === null) continue;
    const next = p.at === 'value' ? canonical(v, fail) : canonicalizeQuantities(v, p, fail);
    if (next === v) continue;
    out ??= { ...obj };
    setOwn(out, k, next);
  }
  return out ?? obj;
}

function map(
  obj: Record<string, unknown>,
  elem: QuantityPlan,
  fail: (message: string) => never,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const next = elem.at !== 'value' ? canonicalizeQuantities(v, elem, fail) : v === null ? '0' : canonical(v, fail);
    if (next === v) continue;
    out ??= { ...obj };
    setOwn(out, k, next);
  }
  return out ?? obj;
}

function list(obj: unknown[], elem: QuantityPlan, fail: (message: string) => never): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < obj.length; i++) {
    const v = obj[i];
    if (v === null && elem.at === 'value') continue;
    const next = elem.at !== 'value' ? canonicalizeQuantities(v, elem, fail) : canonical(v, fail);
    if (next === v) continue;
    out ??= obj.slice();
    out[i] = next;
  }
  return out ?? obj;
}

/**
 * Canonical forms of the quantity strings seen lately: every write of an object canonicalizes
 * all of its quantities, mostly the same few strings (`100m`, `64Mi`). canonicalQuantity is a
 * pure function, so a remembered answer is the answer; bounded, started over when full.
 */
const canonicalStrings = new Map<string, string>();
const MAX_CANONICAL = 4096;

function canonical(v: unknown, fail: (message: string) => never): string {
  if (typeof v === 'string') {
    const known = canonicalStrings.get(v);
    if (known !== undefined) return known;
  }
  const r = canonicalQuantity(v);
  if ('error' in r) return fail(r.error);
  if (typeof v === 'string') {
    if (canonicalStrings.size >= MAX_CANONICAL) canonicalStrings.clear();
    canonicalStrings.set(v, r.value);
  }
  return r.value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
