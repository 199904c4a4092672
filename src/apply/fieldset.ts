/**
 * Field paths and sets of paths: the data model of server-side apply. A path element is
 * `f:<field>`, `k:<json keys>`, `v:<json value>` or `i:<index>`; a FieldSet is a set of paths
 * with the set algebra apply needs. Paths are derived from objects with the compiled schema.
 */
import type { SchemaNode } from '../schema/schema.js';

export type Path = string[];
const SEP = '\u0001';

export class FieldSet {
  private readonly items: Set<string>;
  constructor(items?: Iterable<string>) { this.items = new Set(items); }

  static of(paths: Path[]): FieldSet { return new FieldSet(paths.map((p) => p.join(SEP))); }

  get size(): number { return this.items.size; }
  has(p: Path): boolean { return this.items.has(p.join(SEP)); }
  add(p: Path): void { this.items.add(p.join(SEP)); }
  paths(): Path[] { return [...this.items].map((s) => s.split(SEP)); }
  union(o: FieldSet): FieldSet { return new FieldSet([...this.items, ...o.items]); }
  difference(o: FieldSet): FieldSet { return new FieldSet([...this.items].filter((x) => !o.items.has(x))); }
  intersection(o: FieldSet): FieldSet { return new FieldSet([...this.items].filter((x) => o.items.has(x))); }
  empty(): boolean { return this.items.size === 0; }

  /** fieldsV1: nested `{ "f:a": { ".": {}, "f:b": {} } }`, "." marking a member with children. */
  toFieldsV1(): Record<string, any> {
    const root: Record<string, any> = {};
    for (const p of this.paths()) {
      let node = root;
      for (const e of p) node = (node[e] ??= {});
    }
    const members = this.items;
    const mark = (node: Record<string, any>, prefix: string[]) => {
      for (const [k, child] of Object.entries(node)) {
        const path = [...prefix, k];
        if (Object.keys(child).length && members.has(path.join(SEP))) child['.'] = {};
        mark(child, path);
      }
    };
    mark(root, []);
    return sortKeys(root);
  }

  static fromFieldsV1(tree: Record<string, any> | undefined): FieldSet {
    const out = new FieldSet();
    const walk = (node: Record<string, any>, prefix: string[]) => {
      for (const [k, child] of Object.entries(node ?? {})) {
        if (k === '.') { if (prefix.length) out.add(prefix); continue; }
        const path = [...prefix, k];
        if (!child || Object.keys(child).length === 0) out.add(path);
        else walk(child, path);
      }
    };
    walk(tree ?? {}, []);
    return out;
  }
}

function sortKeys(o: Record<string, any>): Record<string, any> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sortKeys(o[k])]));
}

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The key element of a list-map item, e.g. `k:{"name":"c"}`. */
export function keyElement(item: Record<string, any>, keys: string[]): string {
  const k: Record<string, unknown> = {};
  for (const key of [...keys].sort()) if (item[key] !== undefined) k[key] = item[key];
  return 'k:' + JSON.stringify(k);
}

/** Every field path set in value; interior maps and list items are members too (the "." marker). */
export function fieldsOf(value: unknown, schema: SchemaNode | undefined, prefix: Path = [], out = new FieldSet()): FieldSet {
  if (isObj(value) && schema?.mapType !== 'atomic' && (!schema || schema.kind === 'struct' || schema.kind === 'map' || schema.kind === 'any')) {
    if (prefix.length && (schema?.kind === 'map' || (schema?.kind !== 'struct' && Object.keys(value).length === 0))) out.add(prefix);
    if (prefix.length && Object.keys(value).length === 0) out.add(prefix);
    for (const [k, v] of Object.entries(value)) {
      const sub = schema?.kind === 'struct' ? schema.props?.[k] : schema?.kind === 'map' ? schema.elem : undefined;
      fieldsOf(v, sub, [...prefix, 'f:' + k], out);
    }
    return out;
  }
  if (Array.isArray(value) && schema?.kind === 'list' && schema.listType === 'map' && schema.mapKeys) {
    out.add(prefix);
    for (const item of value) {
      if (!isObj(item)) continue;
      const p = [...prefix, keyElement(item, schema.mapKeys)];
      out.add(p);
      fieldsOf(item, schema.elem, p, out);
    }
    return out;
  }
  if (Array.isArray(value) && schema?.kind === 'list' && schema.listType === 'set') {
    out.add(prefix);
    for (const item of value) out.add([...prefix, 'v:' + JSON.stringify(item)]);
    return out;
  }
  if (prefix.length) out.add(prefix);
  return out;
}

/** The value at a path, or undefined. */
export function valueAt(obj: unknown, path: Path): unknown {
  let cur: any = obj;
  for (const e of path) {
    if (cur === undefined || cur === null) return undefined;
    if (e.startsWith('f:')) cur = isObj(cur) ? cur[e.slice(2)] : undefined;
    else if (e.startsWith('k:')) cur = Array.isArray(cur) ? cur.find((it) => isObj(it) && matchesKey(it, e)) : undefined;
    else if (e.startsWith('v:')) cur = Array.isArray(cur) ? cur.find((it) => JSON.stringify(it) === e.slice(2)) : undefined;
    else if (e.startsWith('i:')) cur = Array.isArray(cur) ? cur[Number(e.slice(2))] : undefined;
  }
  return cur;
}

function matchesKey(item: Record<string, any>, e: string): boolean {
  const k = JSON.parse(e.slice(2)) as Record<string, unknown>;
  return Object.entries(k).every(([kk, vv]) => JSON.stringify(item[kk]) === JSON.stringify(vv));
}

/** Removes the field at path from obj (in place). */
export function removeAt(obj: unknown, path: Path): void {
  if (!path.length) return;
  const parent = valueAt(obj, path.slice(0, -1));
  const e = path[path.length - 1]!;
  if (e.startsWith('f:') && isObj(parent)) delete parent[e.slice(2)];
  else if (Array.isArray(parent)) {
    const i = e.startsWith('k:') ? parent.findIndex((it) => isObj(it) && matchesKey(it, e))
      : e.startsWith('v:') ? parent.findIndex((it) => JSON.stringify(it) === e.slice(2)) : Number(e.slice(2));
    if (i >= 0) parent.splice(i, 1);
  }
}
