/** RFC 6902 JSON patch: add, remove, replace, move, copy, test. Never mutates its input. */
import { errors } from '../api/status.js';

interface Operation { op: string; path: string; value?: unknown; from?: string }

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw errors.invalidPatch(`invalid JSON pointer "${p}"`);
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parent(doc: any, tokens: string[], path: string): { container: any; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
    cur = Array.isArray(cur) ? cur[index(cur, t, path, false)] : cur[t];
    if (cur === undefined) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  }
  if (cur === null || typeof cur !== 'object') throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  return { container: cur, key: tokens[tokens.length - 1]! };
}

function index(arr: unknown[], t: string, path: string, forAdd: boolean): number {
  if (forAdd && t === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(t)) throw errors.invalidPatch(`invalid array index "${t}" in "${path}"`);
  const i = Number(t);
  if (i > arr.length || (!forAdd && i === arr.length)) throw errors.invalidPatch(`Unable to access invalid index: ${i}`);
  return i;
}

function get(doc: any, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const { container, key } = parent(doc, tokens, path);
  const v = Array.isArray(container) ? container[index(container, key, path, false)] : container[key];
  if (v === undefined) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  return v;
}

function add(doc: any, path: string, value: unknown): any {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) container.splice(index(container, key, path, true), 0, value);
  else container[key] = value;
  return doc;
}

function remove(doc: any, path: string): any {
  const tokens = parsePointer(path);
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) container.splice(index(container, key, path, false), 1);
  else {
    if (!(key in container)) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
    delete container[key];
  }
  return doc;
}

/** Applies the operations to a copy of doc; a failed test or bad path changes nothing. */
export function applyJsonPatch(doc: unknown, patch: unknown): any {
  if (!Array.isArray(patch)) throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let out: any = structuredClone(doc);
  for (const raw of patch as Operation[]) {
    if (!raw || typeof raw !== 'object' || typeof raw.path !== 'string') throw errors.invalidPatch('operation must have a path');
    if ((raw.op === 'add' || raw.op === 'replace' || raw.op === 'test') && !('value' in raw)) throw errors.invalidPatch(`${raw.op} operation does not apply: doc is missing value`);
    if ((raw.op === 'move' || raw.op === 'copy') && typeof raw.from !== 'string') throw errors.invalidPatch(`${raw.op} operation does not apply: missing from`);
    switch (raw.op) {
      case 'add': out = add(out, raw.path, structuredClone(raw.value)); break;
      case 'remove': out = remove(out, raw.path); break;
      case 'replace':
        get(out, raw.path);
        out = raw.path === '' ? structuredClone(raw.value) : add(remove(out, raw.path), raw.path, structuredClone(raw.value));
        break;
      case 'move': {
        const from = raw.from ?? '';
        if (raw.path.startsWith(from + '/')) throw errors.invalidPatch(`cannot move "${from}" into its own child "${raw.path}"`);
        const v = get(out, from);
        out = add(remove(out, from), raw.path, v);
        break;
      }
      case 'copy': out = add(out, raw.path, structuredClone(get(out, raw.from ?? ''))); break;
      case 'test':
        if (JSON.stringify(canonical(get(out, raw.path))) !== JSON.stringify(canonical(raw.value))) {
          throw errors.invalidPatch(`testing value ${raw.path} failed: test failed`);
        }
        break;
      default: throw errors.invalidPatch(`Unexpected kind: ${raw.op}`);
    }
  }
  return out;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as any)[k])]));
  return v;
}
