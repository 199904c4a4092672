/**
 * The comparison of two versions of an object (upstream typed Compare): which paths were
 * added, which leaves were modified, which paths were removed. Ownership moves by these sets:
 * an update takes `added ∪ modified`; everyone loses `removed`; apply conflicts are other
 * managers' claims on `added ∪ modified`.
 */
import type { SchemaNode } from '../schema/schema.js';
import { ownValue } from '../api/own-keys.js';
import { FieldSet, fieldKey, fieldSchema, hasNoKeys, itemElement, joinKey, shape } from './fieldset.js';
import { IGNORED_META_NAMES, topTracked, tracked } from './tracked-paths.js';
import { sameKeyOrder } from './item-elements.js';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

export function compare(before: unknown, after: unknown, schema: SchemaNode | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walk(before, after, schema, '', false, c);
  return c;
}

/**
 * compare(before, after) without the paths ownership never tracks (tracked-paths.ts), which
 * are then never walked: no status, no system metadata, no sets of every path filtered after.
 */
export function compareTracked(
  before: unknown,
  after: unknown,
  schema: SchemaNode | undefined,
  sub?: string,
): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  if (before === after) return c;
  if (shape(before, schema) !== 'fields' || shape(after, schema) !== 'fields') {
    walk(before, after, schema, '', false, c);
    return { added: tracked(c.added, sub), modified: tracked(c.modified, sub), removed: tracked(c.removed, sub) };
  }
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const field = (k: string) => {
    const s = fieldSchema(schema, k);
    const p = fieldKey('', k);
    if (s === null || !topTracked(p, sub)) return;
    const x = ownValue(a, k);
    const y = ownValue(b, k);
    if (k !== 'metadata') walk(x, y, s, p, isRequired(schema, k), c);
    else if (x !== y) metadata(x, y, s, isRequired(schema, k), c, sub);
  };
  for (const k in a) field(k);
  for (const k in b) if (!Object.hasOwn(a, k)) field(k);
  return c;
}

/** The metadata field: its tracked fields walked, or (another shape on a side) compared whole and filtered. */
function metadata(
  x: unknown,
  y: unknown,
  s: SchemaNode | undefined,
  required: boolean,
  c: Comparison,
  sub: string | undefined,
): void {
  if (x === undefined || y === undefined || shape(x, s) !== 'fields' || shape(y, s) !== 'fields') {
    const m: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
    walk(x, y, s, 'f:metadata', required, m);
    c.added = c.added.union(tracked(m.added, sub));
    c.modified = c.modified.union(tracked(m.modified, sub));
    c.removed = c.removed.union(tracked(m.removed, sub));
    return;
  }
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  const field = (k: string) => {
    const fs = fieldSchema(s, k);
    if (fs !== null && !IGNORED_META_NAMES.has(k))
      walk(ownValue(a, k), ownValue(b, k), fs, fieldKey('f:metadata', k), isRequired(s, k), c);
  };
  for (const k in a) field(k);
  for (const k in b) if (!Object.hasOwn(a, k)) field(k);
}

/**
 * compare({}, after).added without the top-level fields named in `skip` and without the field
 * `inner.field` itself nor its fields named in `inner.skip` (what ownership never tracks is
 * then never walked: a create's comparison). Undefined when `after` or its `inner.field` is not
 * a granular object: the caller compares as usual.
 */
export function addedPaths(
  after: unknown,
  schema: SchemaNode | undefined,
  skip: ReadonlySet<string>,
  inner: { field: string; skip: ReadonlySet<string> },
): FieldSet | undefined {
  if (shape(after, schema) !== 'fields') return undefined;
  const out = new FieldSet();
  const obj = after as Record<string, unknown>;
  for (const k in obj) {
    const v = ownValue(obj, k);
    const sub = fieldSchema(schema, k);
    // as walk(): a field absent on both sides (undefined) is no change
    if (v === undefined || sub === null || skip.has(k)) continue;
    if (k !== inner.field) {
      nodes(v, sub, fieldKey('', k), isRequired(schema, k), out, true);
      continue;
    }
    if (shape(v, sub) !== 'fields') return undefined;
    const fields = v as Record<string, unknown>;
    for (const f in fields) {
      const fs = fieldSchema(sub, f);
      if (fs !== null && !inner.skip.has(f))
        nodes(fields[f], fs, fieldKey(fieldKey('', k), f), isRequired(sub, f), out, true);
    }
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => same(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/**
 * path: the joined path (see joinKey); required: the field is a required member of its struct
 * (never absent, so never "added" as a whole). The same reference on both sides is unchanged
 * (apply's merge shares what it did not touch), so it is skipped without a walk.
 */
function walk(a: unknown, b: unknown, s: SchemaNode | undefined, path: string, required: boolean, c: Comparison): void {
  if (a === b) return;
  if (a === undefined) {
    nodes(b, s, path, required, c.added, true);
    return;
  }
  if (b === undefined) {
    nodes(a, s, path, required, c.removed, false);
    return;
  }
  const sa = shape(a, s);
  const sb = shape(b, s);
  if (sa !== sb) {
    nodes(a, s, path, required, c.removed, false);
    nodes(b, s, path, required, c.added, true);
    return;
  }
  if (sa === 'leaf') {
    if (!same(a, b)) c.modified.addKey(path);
    return;
  }
  if (sa === 'fields') {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const field = (k: string) => {
      const sub = fieldSchema(s, k);
      // own keys only: a key on one side only is absent on the other, whatever its name (`__proto__`)
      if (sub === null) return;
      const x = ownValue(ao, k);
      const y = ownValue(bo, k);
      // the unchanged (most fields of a write) cost no path string
      if (x !== y) walk(x, y, sub, fieldKey(path, k), isRequired(s, k), c);
    };
    for (const k in ao) field(k);
    for (const k in bo) if (!Object.hasOwn(ao, k)) field(k);
    return;
  }
  items(a as unknown[], b as unknown[], s!, sa as 'listmap' | 'set', path, c);
}

/** The items of two versions of a list-map or set, matched by element; an item on both sides unchanged or walked. */
function items(a: unknown[], b: unknown[], s: SchemaNode, sh: 'listmap' | 'set', path: string, c: Comparison): void {
  if (sh === 'listmap' && sameElements(a, b, s, path, c)) return;
  const ai = index(a, s, sh);
  const bi = index(b, s, sh);
  const item = (e: string, x: unknown, y: unknown) => {
    // on both sides: a set's value is the same; a list-map's item is the same reference or walked
    if (x === y || (sh === 'set' && x !== undefined && y !== undefined)) return;
    const p = joinKey(path, e);
    if (sh === 'set') c[x === undefined ? 'added' : 'removed'].addKey(p);
    else if (x === undefined) {
      nodes(y, s.elem, p, false, c.added, true);
      c.added.addKey(p);
    } else if (y === undefined) {
      nodes(x, s.elem, p, false, c.removed, false);
      c.removed.addKey(p);
    } else walk(x, y, s.elem, p, false, c);
  };
  for (const [e, x] of ai) item(e, x, bi.get(e));
  for (const [e, y] of bi) if (!ai.has(e)) item(e, undefined, y);
}

/**
 * The usual list-map of an update: both versions hold the same distinct elements in the same
 * order, so item i pairs with item i and the walk is items()' own, in the same order, without
 * its two maps. False (nothing recorded) otherwise.
 */
function sameElements(a: unknown[], b: unknown[], s: SchemaNode, path: string, c: Comparison): boolean {
  const keys = sameKeyOrder(a, b, s, 'listmap');
  if (keys === undefined) return false;
  for (let i = 0; i < keys.length; i++) if (a[i] !== b[i]) walk(a[i], b[i], s.elem, joinKey(path, keys[i]!), false, c);
  return true;
}

function isRequired(s: SchemaNode | undefined, k: string): boolean {
  return s?.kind === 'struct' && !!s.required?.includes(k);
}

function index(list: unknown[], s: SchemaNode, sh: 'listmap' | 'set'): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const item of list) {
    const e = itemElement(item, s, sh);
    if (e !== undefined && !m.has(e)) m.set(e, item);
  }
  return m;
}

/**
 * Every path of a value that appeared or disappeared as a whole. For additions an interior
 * node is a member of its own only where upstream records one: list items (always, by the
 * caller), maps and lists that may be absent, and empty structs; a struct with fields is not.
 */
function nodes(
  v: unknown,
  s: SchemaNode | undefined,
  path: string,
  required: boolean,
  out: FieldSet,
  adding: boolean,
): void {
  const sh = shape(v, s);
  if (sh === 'leaf') {
    out.addKey(path);
    return;
  }
  const struct = s?.kind === 'struct';
  if (!adding || (sh === 'fields' ? (!struct || hasNoKeys(v as object)) && !required : !required)) out.addKey(path);
  if (sh === 'fields') {
    for (const k in v as Record<string, unknown>) {
      const sub = fieldSchema(s, k);
      if (sub !== null) nodes((v as Record<string, unknown>)[k], sub, fieldKey(path, k), isRequired(s, k), out, adding);
    }
    return;
  }
  for (const item of v as unknown[]) {
    const e = itemElement(item, s!, sh);
    if (e === undefined) continue;
    const p = joinKey(path, e);
    out.addKey(p);
    if (sh === 'listmap') nodes(item, s!.elem, p, false, out, adding);
  }
}
