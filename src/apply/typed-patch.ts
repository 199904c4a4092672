/**
 * The applied configuration as upstream types it before merging (structured-merge-diff's
 * ObjectToTyped in the field manager): an associative list (list-map) may not hold two items
 * with the same key, nor a set list the same value twice. Upstream's error is not a Status, so
 * the client gets a 500 without a reason: `failed to create typed patch object (<namespace>/<name>;
 * <group>/<version>, Kind=<kind>): <list path>: duplicate entries for key [name="x"]`, every
 * repeat listed (`errors:` and one line each when there are several). Live objects may hold
 * duplicates (created or updated without apply), as upstream allows.
 */
import { StatusError } from '../api/status.js';
import type { SchemaNode } from '../schema/schema.js';
import { fieldSchema, itemElement, pathString, shape, type Path } from './fieldset.js';

/** Throws upstream's 500 when the applied configuration repeats a list-map key or a set value. */
export function checkAppliedDuplicates(applied: unknown, schema: SchemaNode | undefined): void {
  const errs: string[] = [];
  walk(applied, schema, [], errs);
  if (!errs.length) return;
  const message = `failed to create typed patch object (${objectName(applied)}): ${errs.length === 1 ? errs[0] : `errors:\n  ${errs.join('\n  ')}`}`;
  throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

function walk(v: unknown, s: SchemaNode | undefined, path: Path, errs: string[]): void {
  const sh = shape(v, s);
  if (sh === 'leaf') return;
  if (sh === 'fields') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const sub = fieldSchema(s, k);
      if (sub !== null) walk(x, sub, [...path, 'f:' + k], errs);
    }
    return;
  }
  const seen = new Set<string>();
  for (const item of v as unknown[]) {
    const e = itemElement(item, s!, sh);
    if (e === undefined) continue;
    if (seen.has(e)) errs.push(`${pathString(path)}: duplicate entries for key ${pathString([e])}`);
    seen.add(e);
    if (sh === 'listmap') walk(item, s!.elem, [...path, e], errs);
  }
}

/** upstream objectGVKNN of the applied object: `<namespace>/<name>; <group>/<version>, Kind=<kind>` */
function objectName(applied: unknown): string {
  const o = (applied ?? {}) as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  };
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return `${String(o.metadata?.namespace ?? '')}/${String(o.metadata?.name ?? '')}; ${gv}, Kind=${String(o.kind ?? '')}`;
}
