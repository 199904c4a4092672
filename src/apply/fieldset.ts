/**
 * Field paths and sets of paths: the data model of server-side apply. A path element is
 * `f:<field>`, `k:<json keys>`, `v:<json value>` or `i:<index>`; a FieldSet is a set of paths
 * with the set algebra apply needs. How a value is walked (granular or atomic) comes from the
 * compiled schema only; see shape().
 */
import { ownValue, setOwn } from '../api/own-keys.js';
import type { SchemaNode } from '../schema/schema.js';
import { itemElement } from './item-elements.js';
import { fieldKey, joinKey, SEP } from './path-keys.js';
import { sortElements } from './element-order.js';

export { itemElement, keyElement, withItemElements } from './item-elements.js';

export type Path = string[];
export { fieldKey, internedKeys, joinKey, resetInterned, SEP } from './path-keys.js';

export class FieldSet {
  private readonly items: Set<string>;
  /** descendantsOf queries so far, and from the second on the members' strict ancestors (see ancestorKeys) */
  private queries = 0;
  private ancestors: Set<string> | undefined;
  constructor(items?: Iterable<string>) {
    this.items = new Set(items);
  }

  static of(paths: Path[]): FieldSet {
    return new FieldSet(paths.map((p) => p.join(SEP)));
  }

  get size(): number {
    return this.items.size;
  }
  has(p: Path): boolean {
    return this.items.has(p.join(SEP));
  }
  add(p: Path): void {
    if (p.length) this.items.add(p.join(SEP));
    this.ancestors = undefined;
  }
  /** Adds a path given in joined form (see joinKey); the root ('') is never a member. */
  addKey(key: string): void {
    if (key) this.items.add(key);
    this.ancestors = undefined;
  }
  paths(): Path[] {
    return [...this.items].map((s) => s.split(SEP));
  }
  /** The members in insertion order as one string: equal for sets built the same way (a memo key). */
  signature(): string {
    return [...this.items].join('\u0002');
  }
  // union and difference return a set itself when the other adds or removes nothing: callers
  // treat sets as values, and an unchanged identity lets managedFields reuse a rendered entry
  union(o: FieldSet): FieldSet {
    if (o.items.size === 0) return this;
    if (this.items.size === 0) return o;
    const out = new FieldSet(this.items);
    for (const x of o.items) out.items.add(x);
    return out;
  }
  difference(o: FieldSet): FieldSet {
    if (o.items.size === 0 || this.items.size === 0) return this;
    let hit = false;
    for (const x of o.items)
      if (this.items.has(x)) {
        hit = true;
        break;
      }
    return hit ? this.where((x) => !o.items.has(x)) : this;
  }
  intersection(o: FieldSet): FieldSet {
    // a small o (an apply's changed paths against a manager's set) that meets nothing: no walk of this
    if (o.items.size * 4 < this.items.size) {
      let hit = false;
      for (const x of o.items)
        if (this.items.has(x)) {
          hit = true;
          break;
        }
      if (!hit) return new FieldSet();
    }
    const out = new FieldSet();
    for (const x of this.items) if (o.items.has(x)) out.items.add(x);
    return out;
  }
  empty(): boolean {
    return this.items.size === 0;
  }
  equals(o: FieldSet): boolean {
    if (this.size !== o.size) return false;
    for (const x of this.items) if (!o.items.has(x)) return false;
    return true;
  }

  /** The members that pass `keep`, in insertion order (a loop: no array of every member per operation). */
  private where(keep: (x: string) => boolean): FieldSet {
    const out = new FieldSet();
    for (const x of this.items) if (keep(x)) out.items.add(x);
    return out;
  }

  /** Members that lie strictly below some member of `o` (for example inside an atomic value). */
  descendantsOf(o: FieldSet): FieldSet {
    if (o.empty()) return new FieldSet();
    // a member of o below which no member lies (the usual answer: none) is not looked for member by member
    const above = this.items.size > 16 ? this.ancestorKeys() : undefined;
    if (above && !o.some((m) => above.has(m))) return new FieldSet();
    if (o.items.size <= 16) {
      // few ancestors (the common case: a handful of modified leaves): prefix tests, no slicing
      const prefixes: string[] = [];
      for (const m of o.items) prefixes.push(m + SEP);
      const out = new FieldSet();
      for (const x of this.items) {
        for (const p of prefixes)
          if (x.startsWith(p)) {
            out.items.add(x);
            break;
          }
      }
      return out;
    }
    return this.where((x) => {
      for (let i = x.lastIndexOf(SEP); i > 0; i = x.lastIndexOf(SEP, i - 1))
        if (o.items.has(x.slice(0, i))) return true;
      return false;
    });
  }

  /** Members that are a strict prefix of some member of `o` (ancestors of what `o` holds). */
  ancestorsOf(o: FieldSet): FieldSet {
    const prefixes = o.strictPrefixes();
    return this.where((x) => prefixes.has(x));
  }

  private some(test: (x: string) => boolean): boolean {
    for (const x of this.items) if (test(x)) return true;
    return false;
  }

  /** Every strict prefix of a member (joined form). */
  private strictPrefixes(): Set<string> {
    const prefixes = new Set<string>();
    for (const x of this.items) {
      for (let i = x.lastIndexOf(SEP); i > 0; i = x.lastIndexOf(SEP, i - 1)) {
        const p = x.slice(0, i);
        if (prefixes.has(p)) break;
        prefixes.add(p);
      }
    }
    return prefixes;
  }

  /**
   * strictPrefixes(), kept from this set's second descendantsOf on: a stored manager's set is one
   * object for as long as its fieldsV1 tree is (managed-fields.ts storedSet) and answers another
   * manager's every write (`taken`); a set asked once pays nothing.
   */
  private ancestorKeys(): Set<string> | undefined {
    if (this.ancestors === undefined && ++this.queries >= 2) this.ancestors = this.strictPrefixes();
    return this.ancestors;
  }

  /** Members whose path passes `keep` (called with the first two elements, the second maybe undefined). */
  filter(keep: (first: string, second: string | undefined) => boolean): FieldSet {
    return this.where((x) => {
      const i = x.indexOf(SEP);
      if (i < 0) return keep(x, undefined);
      const j = x.indexOf(SEP, i + 1);
      return keep(x.slice(0, i), x.slice(i + 1, j < 0 ? undefined : j));
    });
  }

  /** fieldsV1: nested `{ "f:a": { ".": {}, "f:b": {} } }`, "." marking a member with children. */
  toFieldsV1(): Record<string, unknown> {
    interface Node {
      member: boolean;
      children: Map<string, Node>;
    }
    const root: Node = { member: false, children: new Map() };
    for (const x of this.items) {
      let node = root;
      for (const e of x.split(SEP)) {
        let next = node.children.get(e);
        if (!next) node.children.set(e, (next = { member: false, children: new Map() }));
        node = next;
      }
      node.member = true;
    }
    const render = (node: Node): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      if (node.member && node.children.size) out['.'] = {};
      const keys = [...node.children.keys()];
      if (keys.length > 1) sortElements(keys);
      for (const k of keys) out[k] = render(node.children.get(k)!);
      return out;
    };
    return render(root);
  }

  static fromFieldsV1(tree: Record<string, unknown> | undefined): FieldSet {
    const out = new FieldSet();
    const walk = (node: Record<string, unknown>, prefix: string) => {
      for (const k in node) {
        if (k === '.') {
          out.addKey(prefix);
          continue;
        }
        const child = node[k];
        // a field element interned as the walks build it (one string per path for pointer compares)
        const key = k.startsWith('f:') ? fieldKey(prefix, k.slice(2)) : joinKey(prefix, k);
        let leaf = true;
        if (child && typeof child === 'object')
          for (const _ in child) {
            leaf = false;
            break;
          }
        if (leaf) out.addKey(key);
        else walk(child as Record<string, unknown>, key); // an object with a key (the loop above)
      }
    };
    if (tree && typeof tree === 'object') walk(tree, '');
    return out;
  }
}

export const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Object.keys(v).length === 0 without the array (the walks ask it of every object they meet). */
export function hasNoKeys(v: object): boolean {
  for (const k in v) if (Object.hasOwn(v, k)) return false;
  return true;
}

/**
 * How a value is walked: `fields` (granular struct or map), `listmap` (items keyed by the list
 * map keys), `set` (scalar items), or `leaf` (scalars and everything atomic, as a whole).
 * Without a schema, objects are granular and lists atomic (upstream's deduced type).
 */
export type Shape = 'fields' | 'listmap' | 'set' | 'leaf';

export function shape(v: unknown, s: SchemaNode | undefined): Shape {
  if (isObj(v)) {
    if (!s || s.kind === 'any') return 'fields';
    return (s.kind === 'struct' || s.kind === 'map') && s.mapType !== 'atomic' ? 'fields' : 'leaf';
  }
  if (Array.isArray(v) && s?.kind === 'list') {
    if (s.listType === 'map' && s.mapKeys) return 'listmap';
    if (s.listType === 'set') return 'set';
  }
  return 'leaf';
}

/** The schema of field `k` of a granular value; `null` when a struct does not declare it (unknown). */
export function fieldSchema(s: SchemaNode | undefined, k: string): SchemaNode | undefined | null {
  if (!s || s.kind === 'any') return undefined;
  if (s.kind === 'map') return s.elem;
  if (s.kind === 'struct')
    return (s.props && (ownValue(s.props, k) as SchemaNode | undefined)) ?? (s.preserveUnknown ? undefined : null);
  return undefined;
}

/**
 * The fields an applied configuration sets (upstream ToFieldSet): every leaf; list items; map
 * entries that are not declared struct fields; empty maps and nulls. Fields a struct does not
 * declare are skipped: they are pruned from the object and nobody owns them.
 */
export function fieldsOf(value: unknown, schema: SchemaNode | undefined, prefix = '', out = new FieldSet()): FieldSet {
  const sh = shape(value, schema);
  if (sh === 'leaf') {
    out.addKey(prefix);
    return out;
  }
  if (sh === 'fields') {
    for (const k in value as Record<string, unknown>) {
      const v = (value as Record<string, unknown>)[k];
      const sub = fieldSchema(schema, k);
      if (sub === null) continue;
      const p = fieldKey(prefix, k);
      fieldsOf(v, sub, p, out);
      if (v === null || schema?.kind !== 'struct' || (isObj(v) && hasNoKeys(v))) out.addKey(p);
    }
    return out;
  }
  for (const item of value as unknown[]) {
    const e = itemElement(item, schema!, sh);
    if (e === undefined) continue;
    const p = joinKey(prefix, e);
    if (sh === 'listmap') fieldsOf(item, schema!.elem, p, out);
    out.addKey(p);
  }
  return out;
}

/** The value at a path, or undefined. */
export function valueAt(obj: unknown, path: Path): unknown {
  let cur: unknown = obj;
  for (const e of path) {
    if (cur === undefined || cur === null) return undefined;
    if (e.startsWith('f:')) cur = isObj(cur) ? ownValue(cur, e.slice(2)) : undefined;
    else if (e.startsWith('k:'))
      cur = Array.isArray(cur) ? cur.find((it) => isObj(it) && matchesKey(it, e)) : undefined;
    else if (e.startsWith('v:'))
      cur = Array.isArray(cur) ? cur.find((it) => JSON.stringify(it) === e.slice(2)) : undefined;
    else if (e.startsWith('i:')) cur = Array.isArray(cur) ? cur[Number(e.slice(2))] : undefined;
  }
  return cur;
}

function matchesKey(item: Record<string, unknown>, e: string): boolean {
  const k = JSON.parse(e.slice(2)) as Record<string, unknown>;
  return Object.entries(k).every(([kk, vv]) => JSON.stringify(item[kk]) === JSON.stringify(vv));
}

function indexOfElement(list: unknown[], e: string): number {
  if (e.startsWith('k:')) return list.findIndex((it) => isObj(it) && matchesKey(it, e));
  if (e.startsWith('v:')) return list.findIndex((it) => JSON.stringify(it) === e.slice(2));
  return e.startsWith('i:') ? Number(e.slice(2)) : -1;
}

/**
 * Copy on write: replaces every container on the way to path (not the value at it) below the
 * already-owned root with a shallow copy, so an in-place change there touches nothing shared.
 */
export function ownPath(root: unknown, path: Path): void {
  let cur: unknown = root;
  for (const e of path.slice(0, -1)) {
    const at: string | number = e.startsWith('f:') ? e.slice(2) : Array.isArray(cur) ? indexOfElement(cur, e) : -1;
    if (cur === null || typeof cur !== 'object' || at === -1) return;
    // a numeric `at` is an index: cur is an array then (indexOfElement)
    const v = typeof at === 'string' ? ownValue(cur, at) : (cur as unknown[])[at];
    if (v === null || typeof v !== 'object') return;
    const copy = Array.isArray(v) ? [...v] : { ...v };
    if (typeof at === 'string') setOwn(cur, at, copy);
    else (cur as unknown[])[at] = copy;
    cur = copy;
  }
}

/** Removes the field at path from obj (in place). */
export function removeAt(obj: unknown, path: Path): void {
  if (!path.length) return;
  const parent = valueAt(obj, path.slice(0, -1));
  const e = path[path.length - 1]!;
  if (e.startsWith('f:') && isObj(parent)) delete parent[e.slice(2)];
  else if (Array.isArray(parent)) {
    const i = indexOfElement(parent, e);
    if (i >= 0) parent.splice(i, 1);
  }
}

/** A path as upstream prints it in conflicts: `.spec.containers[name="c"].image`. */
export function pathString(p: Path): string {
  return p
    .map((e) => {
      if (e.startsWith('f:')) return '.' + e.slice(2);
      if (e.startsWith('i:')) return `[${e.slice(2)}]`;
      if (e.startsWith('v:')) return `[=${e.slice(2)}]`;
      const keys = JSON.parse(e.slice(2)) as Record<string, unknown>;
      return `[${Object.entries(keys)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}
