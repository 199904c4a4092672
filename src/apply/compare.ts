/**
 * The comparison of two versions of an object (upstream typed Compare): which paths were
 * added, which leaves were modified, which paths were removed. Ownership moves by these sets:
 * an update takes `added ∪ modified`; everyone loses `removed`; apply conflicts are other
 * managers' claims on `added ∪ modified`.
 */
import type { SchemaNode } from '../schema/schema.js';
import { FieldSet, fieldSchema, itemElement, shape, type Path } from './fieldset.js';

export interface Comparison { added: FieldSet; modified: FieldSet; removed: FieldSet }

export function compare(before: unknown, after: unknown, schema: SchemaNode | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walk(before, after, schema, [], false, c);
  return c;
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => same(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same((a as any)[k], (b as any)[k]));
}

/** required: the field is a required member of its struct (never absent, so never "added" as a whole). */
function walk(a: unknown, b: unknown, s: SchemaNode | undefined, path: Path, required: boolean, c: Comparison): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) { nodes(b, s, path, required, c.added, true); return; }
  if (b === undefined) { nodes(a, s, path, required, c.removed, false); return; }
  const sa = shape(a, s);
  const sb = shape(b, s);
  if (sa !== sb) { nodes(a, s, path, required, c.removed, false); nodes(b, s, path, required, c.added, true); return; }
  if (sa === 'leaf') { if (!same(a, b)) c.modified.add(path); return; }
  if (sa === 'fields') {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      const sub = fieldSchema(s, k);
      if (sub === null) continue;
      walk(ao[k], bo[k], sub, [...path, 'f:' + k], isRequired(s, k), c);
    }
    return;
  }
  const ai = index(a as unknown[], s!, sa as 'listmap' | 'set');
  const bi = index(b as unknown[], s!, sa as 'listmap' | 'set');
  for (const e of new Set([...ai.keys(), ...bi.keys()])) {
    const p = [...path, e];
    const x = ai.get(e);
    const y = bi.get(e);
    if (sa === 'set') { if (x === undefined) c.added.add(p); else if (y === undefined) c.removed.add(p); continue; }
    if (x === undefined) { nodes(y, s!.elem, p, false, c.added, true); c.added.add(p); }
    else if (y === undefined) { nodes(x, s!.elem, p, false, c.removed, false); c.removed.add(p); }
    else walk(x, y, s!.elem, p, false, c);
  }
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
function nodes(v: unknown, s: SchemaNode | undefined, path: Path, required: boolean, out: FieldSet, adding: boolean): void {
  const sh = shape(v, s);
  if (sh === 'leaf') { out.add(path); return; }
  const struct = s?.kind === 'struct';
  if (!adding || (sh === 'fields' ? (!struct || Object.keys(v as object).length === 0) && !required : !required)) out.add(path);
  if (sh === 'fields') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const sub = fieldSchema(s, k);
      if (sub !== null) nodes(x, sub, [...path, 'f:' + k], isRequired(s, k), out, adding);
    }
    return;
  }
  for (const item of v as unknown[]) {
    const e = itemElement(item, s!, sh);
    if (e === undefined) continue;
    out.add([...path, e]);
    if (sh === 'listmap') nodes(item, s!.elem, [...path, e], false, out, adding);
  }
}
