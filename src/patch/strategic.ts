/**
 * Strategic merge patch for built-in kinds: lists merge by their schema merge key, with the
 * directives $patch (replace|delete|merge), $retainKeys, $deleteFromPrimitiveList/<field> and
 * $setElementOrder/<field>. Merge keys come from the compiled schema, never guessed.
 * Linear in the sizes of the object and the patch: list elements are found by key through a
 * Map, never by scanning the list per element (a 60,000-element patch held an actor for minutes).
 */
import { errors } from '../api/status.js';
import type { SchemaNode } from '../schema/schema.js';
import { ownValue, setOwn } from '../api/own-keys.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';
const ORDER = '$setElementOrder/';

export function applyStrategicPatch(original: unknown, patch: unknown, schema: SchemaNode | undefined): unknown {
  if (!isObj(patch)) throw errors.badRequest('strategic merge patch must be a JSON object');
  return mergeMap(isObj(original) ? original : {}, patch, schema);
}

function child(schema: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (!schema) return undefined;
  if (schema.kind === 'struct')
    return schema.props ? (ownValue(schema.props, key) as SchemaNode | undefined) : undefined;
  if (schema.kind === 'map') return schema.elem;
  return undefined;
}

function mergeMap(original: Obj, patch: Obj, schema: SchemaNode | undefined): Obj | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const { $patch: _, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (directive !== undefined && directive !== 'merge') throw errors.badRequest(`Unknown patch type: ${directive}`);
  const out: Obj = { ...original };
  // every key is an ordinary key: own reads and writes only (src/api/own-keys.ts)
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(ORDER)) continue;
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      const list = ownValue(out, field);
      if (Array.isArray(list) && Array.isArray(value)) {
        const gone = new Set<unknown>(value);
        setOwn(
          out,
          field,
          list.filter((x: unknown) => !gone.has(x)),
        );
      }
      continue;
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    const sub = child(schema, key);
    const cur = ownValue(out, key);
    if (isObj(value) && (isObj(cur) || cur === undefined)) {
      const merged = mergeMap(isObj(cur) ? cur : {}, value, sub);
      if (merged === undefined) delete out[key];
      else setOwn(out, key, merged);
    } else if (Array.isArray(value)) {
      setOwn(out, key, mergeList(Array.isArray(cur) ? cur : [], value, sub));
    } else {
      setOwn(out, key, stripDirectives(value));
    }
  }
  for (const [key, order] of Object.entries(patch)) {
    if (key.startsWith(ORDER) && Array.isArray(order)) {
      const field = key.slice(ORDER.length);
      const list = ownValue(out, field);
      if (Array.isArray(list)) setOwn(out, field, reorder(list, order, child(schema, field)?.mergeKey));
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set<unknown>(patch.$retainKeys);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], schema: SchemaNode | undefined): unknown[] {
  const merge = schema?.patchStrategy?.split(',').includes('merge');
  if (!merge) return stripDirectives(patch.filter((e) => !(isObj(e) && e.$patch)));
  const key = schema!.mergeKey;
  if (patch.some((e) => isObj(e) && e.$patch === 'replace')) {
    return stripDirectives(patch.filter((e) => !(isObj(e) && e.$patch === 'replace')));
  }
  if (!key) {
    // a set of values: add those not there yet (compared as JSON)
    const out = [...original];
    const seen = new Set(out.map((x) => JSON.stringify(x)));
    for (const e of patch) {
      const id = JSON.stringify(e);
      if (!seen.has(id)) {
        seen.add(id);
        out.push(e);
      }
    }
    return out;
  }
  return mergeKeyed(original, patch, key, schema!.elem);
}

/** Merges a list of objects by merge key: patch elements merge into, delete or follow the element with their key. */
function mergeKeyed(original: unknown[], patch: unknown[], key: string, elem: SchemaNode | undefined): unknown[] {
  const out = [...original] as Obj[];
  const deleted = new Set<number>();
  // merge key value -> indices in out of the elements carrying it, first first
  const at = new Map<unknown, number[]>();
  const index = (k: unknown, i: number) => {
    const l = at.get(k);
    if (l) l.push(i);
    else at.set(k, [i]);
  };
  out.forEach((x, i) => {
    if (isObj(x)) index(x[key], i);
  });
  for (const e of patch) {
    if (!isObj(e)) throw errors.badRequest(`the merge key "${key}" is missing from an element of a merged list`);
    if (e.$patch === 'merge') throw errors.badRequest('merging lists cannot yet be specified in the patch');
    if (e[key] === undefined)
      throw errors.badRequest(`map: ${JSON.stringify(e)} does not contain declared merge key: ${key}`);
    const found = at.get(e[key]);
    const i = found?.[0];
    if (e.$patch === 'delete') {
      if (i !== undefined) {
        deleted.add(i);
        found!.shift();
      }
      continue;
    }
    if (i !== undefined) out[i] = mergeMap(out[i]!, e, elem) ?? out[i]!;
    else {
      index(e[key], out.length);
      out.push(stripDirectives(e) as Obj);
    }
  }
  return deleted.size ? out.filter((_, i) => !deleted.has(i)) : out;
}

function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (e: unknown) => JSON.stringify(key && isObj(e) ? e[key] : e);
  const pos = new Map(order.map((o, i) => [JSON.stringify(key && isObj(o) ? o[key] : o), i]));
  return [...list].sort((a, b) => (pos.get(id(a)) ?? Infinity) - (pos.get(id(b)) ?? Infinity));
}

function stripDirectives<T>(v: T): T {
  if (Array.isArray(v)) return v.map(stripDirectives) as T;
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith(ORDER) || k.startsWith(DELETE_PRIMITIVE)) continue;
    setOwn(out, k, stripDirectives(x));
  }
  return out as T;
}
