/**
 * Field validation against the compiled schema: field types are always checked; unknown
 * fields are dropped (pruned), and reported per `fieldValidation` (Ignore, Warn, Strict).
 */
import { errors } from '../api/status.js';
import type { SchemaNode } from './schema.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

interface Findings { unknown: string[]; types: string[] }

function typeName(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'object' ? 'object' : typeof v;
}

function scalarOk(t: string | undefined, v: unknown): boolean {
  switch (t) {
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'boolean': return typeof v === 'boolean';
    case 'int-or-string': return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
    default: return true;
  }
}

/**
 * What a typed decode and encode would not keep (upstream's `omitempty`): a null field, and an
 * empty map or list in an optional field. `labels: {}` or `finalizers: []` are stored as absent.
 */
function omitted(v: unknown, s: SchemaNode, required: boolean): boolean {
  if (v === null) return s.kind !== 'any';
  if (required) return false;
  if (s.kind === 'map') return isObj(v) && Object.keys(v).length === 0;
  if (s.kind === 'list') return Array.isArray(v) && v.length === 0;
  return false;
}

function walk(v: unknown, s: SchemaNode | undefined, path: string, f: Findings): void {
  if (!s || v === null || v === undefined || s.kind === 'any') return;
  const at = path || '<root>';
  switch (s.kind) {
    case 'scalar':
      if (!scalarOk(s.scalarType, v)) f.types.push(`${at}: expected ${s.scalarType}, got ${typeName(v)}`);
      return;
    case 'list':
      if (!Array.isArray(v)) { f.types.push(`${at}: expected array, got ${typeName(v)}`); return; }
      v.forEach((item, i) => walk(item, s.elem, `${path}[${i}]`, f));
      return;
    case 'map':
      if (!isObj(v)) { f.types.push(`${at}: expected object, got ${typeName(v)}`); return; }
      for (const [k, x] of Object.entries(v)) walk(x, s.elem, `${path}[${k}]`, f);
      return;
    case 'struct':
      if (!isObj(v)) { f.types.push(`${at}: expected object, got ${typeName(v)}`); return; }
      for (const [k, x] of Object.entries(v)) {
        const sub = s.props?.[k];
        const p = path ? `${path}.${k}` : k;
        if (!sub) {
          if (s.preserveUnknown) continue;
          f.unknown.push(p); delete v[k]; continue;
        }
        walk(x, sub, p, f);
        if (omitted(x, sub, !!s.required?.includes(k))) delete v[k];
      }
  }
}

/**
 * Checks obj in place against schema: type mismatches are 400; unknown fields are pruned and
 * returned as warnings (Warn), rejected (Strict, listing all of them) or dropped (Ignore).
 */
export function validateFields(obj: unknown, schema: SchemaNode | undefined, mode: FieldValidation): string[] {
  if (!schema) return [];
  const f: Findings = { unknown: [], types: [] };
  walk(obj, schema, '', f);
  if (f.types.length) throw errors.badRequest(`failed to decode object: ${f.types.join('; ')}`);
  if (!f.unknown.length || mode === 'Ignore') return [];
  const messages = f.unknown.map((p) => `unknown field "${p}"`);
  if (mode === 'Strict') throw errors.badRequest(`strict decoding error: ${messages.join(', ')}`);
  return messages;
}

export function parseFieldValidation(v: string | null): FieldValidation {
  if (v === null || v === '' || v === 'Warn') return 'Warn';
  if (v === 'Ignore' || v === 'Strict') return v;
  throw errors.badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
}
