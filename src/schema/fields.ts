/**
 * Field validation against the compiled schema: field types are always checked; unknown
 * fields are dropped (pruned) and repeated keys keep their last value; both are reported per
 * `fieldValidation` (Ignore, Warn, Strict) with upstream's wording and order.
 */
import { errors } from '../api/status.js';
import type { SchemaNode } from './schema.js';
import type { Duplicate } from './yaml-value.js';
import { ownValue } from '../api/own-keys.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/**
 * How the body was decoded, which decides how upstream reports its repeated keys:
 * `object` a JSON create or update (typed decode: repeats and unknown fields in document
 * order, a repeat inside an unknown field only as unknown), `yaml` a YAML create or update
 * (`line N: key "k" already set in map` first, then unknown fields sorted), `patch` a JSON
 * merge or strategic patch (the patch's repeats first, then unknown fields sorted),
 * `json-patch` (repeated keys of the operations only) and `apply` (YAML wording; Strict fails
 * at decoding, before unknown fields are looked at).
 */
export type DecodedAs = 'object' | 'yaml' | 'patch' | 'json-patch' | 'apply';

export interface DecodeNotes {
  as: DecodedAs;
  duplicates: Duplicate[];
  /**
   * A strategic merge patch: upstream converts the patched map into the typed object, so a
   * value of the wrong shape for a map, struct or list fails with the converter's words
   * (`cannot restore map from string`); this builds that error.
   */
  restoreError?: (why: string) => Error;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

interface Findings {
  unknown: string[];
  types: string[];
  /** the first container of the wrong shape, in the unstructured converter's words */
  restore?: string;
  /** the first integer out of its format's range, as Go's typed decode words it */
  range?: string;
  /** repeats reported in walk order (typed JSON decode only) */
  repeats?: Set<string>;
  ordered?: string[];
}

const unknownField = (p: string) => `unknown field "${p}"`;
const duplicateField = (p: string) => `duplicate field "${p}"`;
const yamlLine = (d: Duplicate) => `line ${d.line}: key ${JSON.stringify(d.key)} already set in map`;

function typeName(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'object' ? 'object' : typeof v;
}

/** RFC 3339 date-time as Go's time.RFC3339 / RFC3339Nano parse it */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** standard base64 with padding, as Go's encoding/base64 StdEncoding accepts */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Go's integer ranges per OpenAPI format (int64 as doubles: 2^63 is the first value out) */
const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63],
};

/** An integer outside its Go type: upstream's json decode error (the first one in document order). */
function checkRange(v: number, format: string, path: string, owner: string | undefined, f: Findings): void {
  const [lo, hi] = INT_RANGE[format]!;
  if (f.range || (v >= lo && (format === 'int64' ? v < hi : v <= hi))) return;
  const field = path.replace(/\[[^\]]*\]/g, '');
  const struct = owner ? `${owner.slice(owner.lastIndexOf('.') + 1)}.` : '';
  f.range = `json: cannot unmarshal number ${BigInt(v)} into Go struct field ${struct}${field} of type ${format}`;
}

function scalarOk(t: string | undefined, v: unknown): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'int-or-string':
      return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
    default:
      return true;
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

/** A repeat of path is reported where the walk meets the key (typed JSON decode only). */
function noteRepeat(f: Findings, p: string): void {
  if (f.repeats?.delete(p)) f.ordered!.push(duplicateField(p));
}

/**
 * owner: the reference name of the struct holding the value (Go names it in decode errors);
 * was: the value at the same place in the stored object a patch started from. The very same
 * node was checked (and pruned) when that object was written: it is not walked again, unless
 * repeated keys are being placed (their report follows the walk).
 */
function walk(v: unknown, s: SchemaNode | undefined, path: string, f: Findings, owner?: string, was?: unknown): void {
  if (!s || v === null || v === undefined || s.kind === 'any' || (v === was && !f.repeats)) return;
  const at = path || '<root>';
  switch (s.kind) {
    case 'scalar':
      if (!scalarOk(s.scalarType, v)) f.types.push(`${at}: expected ${s.scalarType}, got ${typeName(v)}`);
      else if (s.format === 'int32' || s.format === 'int64') checkRange(v as number, s.format, path, owner, f);
      else if (s.format === 'byte' && !BASE64.test(v as string)) f.types.push(`${at}: illegal base64 data`);
      else if (s.format === 'date-time' && !RFC3339.test(v as string))
        f.types.push(`${at}: parsing time ${JSON.stringify(v)}: not an RFC 3339 time`);
      return;
    case 'list':
      if (!Array.isArray(v)) return wrongShape(v, 'array', 'cannot restore slice from ', at, f);
      return walkList(v, s, path, f, owner, Array.isArray(was) ? was : undefined);
    case 'map':
      if (!isObj(v)) return wrongShape(v, 'object', 'cannot restore map from ', at, f);
      return walkMap(v, s, path, f, owner, isObj(was) ? was : undefined);
    case 'struct':
      if (!isObj(v)) return wrongShape(v, 'object', 'cannot restore struct from: ', at, f);
      return walkStruct(v, s, path, f, isObj(was) ? was : undefined);
  }
}

/** A value of the wrong JSON type: the typed error, and the decoder's message for the object. */
function wrongShape(v: unknown, expected: string, restore: string, at: string, f: Findings): void {
  f.types.push(`${at}: expected ${expected}, got ${typeName(v)}`);
  f.restore ??= `${restore}${goKind(v)}`;
}

function walkList(v: unknown[], s: SchemaNode, path: string, f: Findings, owner?: string, was?: unknown[]): void {
  v.forEach((item, i) => {
    // a list element has no "unset": null is not a value of the element type
    if (item === null && s.elem && s.elem.kind !== 'any')
      f.types.push(`${path}[${i}]: expected ${s.elem.kind === 'scalar' ? s.elem.scalarType : 'object'}, got null`);
    else walk(item, s.elem, `${path}[${i}]`, f, owner, was?.[i]);
  });
}

function walkMap(
  v: Record<string, unknown>,
  s: SchemaNode,
  path: string,
  f: Findings,
  owner?: string,
  was?: Record<string, unknown>,
): void {
  if (s.elem?.kind === 'scalar' && !s.elem.format && !f.repeats) {
    // the common map of strings (labels, annotations, data): no paths built unless one is wrong
    for (const k in v) if (!scalarOk(s.elem.scalarType, v[k])) walk(v[k], s.elem, `${path}[${k}]`, f, owner);
    return;
  }
  for (const k in v) {
    if (f.repeats) noteRepeat(f, path ? `${path}.${k}` : k);
    walk(v[k], s.elem, `${path}[${k}]`, f, owner, was && ownValue(was, k));
  }
}

/** Unknown fields are reported and dropped (unless the struct preserves them); omitted empties are dropped. */
function walkStruct(
  v: Record<string, unknown>,
  s: SchemaNode,
  path: string,
  f: Findings,
  was?: Record<string, unknown>,
): void {
  for (const k in v) {
    const x = v[k];
    const sub = s.props && (ownValue(s.props, k) as SchemaNode | undefined);
    // a plain scalar of its type (most fields): walk() would find nothing and it is never omitted, so no path string
    if (sub && x !== null && sub.kind === 'scalar' && !sub.format && !f.repeats && scalarOk(sub.scalarType, x))
      continue;
    const p = path ? `${path}.${k}` : k;
    if (!sub) {
      if (s.preserveUnknown) continue;
      f.unknown.push(p);
      f.ordered?.push(unknownField(p));
      delete v[k];
      continue;
    }
    if (f.repeats) noteRepeat(f, p);
    walk(x, sub, p, f, s.name, was && ownValue(was, k));
    if (omitted(x, sub, !!s.required?.includes(k))) delete v[k];
  }
}

/** Whether p is one of `paths` or lies under one (a Set lookup per path segment, not a scan of every path per p). */
function underAny(p: string, paths: Set<string>): boolean {
  if (paths.has(p)) return true;
  for (let i = 1; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if ((c === 46 || c === 91) && paths.has(p.slice(0, i))) return true;
  }
  return false;
}

/** The Warn messages in upstream's order; `yamlBlock` is the repeats part of a YAML Strict error. */
function messages(f: Findings, notes: DecodeNotes | undefined): { list: string[]; yamlBlock?: string } {
  const dups = notes?.duplicates ?? [];
  if (!dups.length) return { list: f.unknown.map(unknownField) };
  const sorted = () => [...f.unknown].sort().map(unknownField);
  switch (notes!.as) {
    case 'object': {
      // repeats the walk never met (inside free-form values) go last; those in unknown fields are not reported
      const unknown = new Set(f.unknown);
      const rest = [...f.repeats!].filter((p) => !underAny(p, unknown));
      return { list: [...f.ordered!, ...rest.map(duplicateField)] };
    }
    case 'patch':
      return { list: [...dups.map((d) => duplicateField(d.path)), ...sorted()] };
    case 'json-patch': {
      const ops = dups.filter((d) => /^\[\d+\]\.[^.[]+$/.test(d.path));
      return { list: [...ops.map((d) => `json patch duplicate field "${d.path}"`), ...sorted()] };
    }
    case 'yaml':
    case 'apply': {
      const lines = dups.map(yamlLine);
      return {
        list: [...lines, ...sorted()],
        yamlBlock: `yaml: unmarshal errors:\n${lines.map((l) => `  ${l}`).join('\n')}`,
      };
    }
  }
}

/**
 * Checks obj in place against schema: type mismatches are 400; unknown fields are pruned and,
 * with the repeated keys `notes` lists, returned as warnings (Warn), rejected together in one
 * 400 (Strict) or dropped (Ignore). Without a schema only repeated keys are reported.
 * `stored`: the stored object a patch started from (src/registry/patch.ts patchBase); the
 * subtrees obj shares with it by reference were checked when it was written and are skipped.
 */
export function validateFields(
  obj: unknown,
  schema: SchemaNode | undefined,
  mode: FieldValidation,
  notes?: DecodeNotes,
  stored?: unknown,
): string[] {
  const f: Findings = { unknown: [], types: [] };
  const dups = notes?.duplicates ?? [];
  if (dups.length && notes!.as === 'object') {
    f.repeats = new Set(dups.map((d) => d.path));
    f.ordered = [];
  }
  if (schema) walk(obj, schema, '', f, undefined, stored);
  if (f.restore && notes?.restoreError) throw notes.restoreError(f.restore);
  if (f.types.length) throw errors.badRequest(`failed to decode object: ${f.types.join('; ')}`);
  if (f.range) throw rangeError(obj, f.range, notes);
  if ((!f.unknown.length && !dups.length) || mode === 'Ignore') return [];
  const { list, yamlBlock } = messages(f, notes);
  if (mode === 'Strict' && list.length) {
    if (notes?.as === 'apply' && yamlBlock)
      throw errors.badRequest(`error strict decoding YAML: error converting YAML to JSON: ${yamlBlock}`);
    const parts = yamlBlock ? [yamlBlock, ...list.slice(dups.length)] : list;
    throw errors.badRequest(`strict decoding error: ${parts.join(', ')}`);
  }
  return list;
}

/**
 * Upstream's answer to an integer its typed decode cannot hold: a create or update body is 400
 * (`<Kind> in version "<v>" cannot be handled as a <Kind>: json: ...`); a patched object fails
 * converting the patch result, 422 Invalid on field `patch`.
 */
function rangeError(obj: unknown, message: string, notes: DecodeNotes | undefined): Error {
  const o = isObj(obj) ? obj : {};
  const kind = typeof o.kind === 'string' ? o.kind : '';
  if (notes && notes.as !== 'object' && notes.as !== 'yaml') {
    // the value upstream shows is the patched object's JSON
    return errors.invalid({ kind: '', name: '' }, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${message}`,
        field: 'patch',
      },
    ]);
  }
  const version = typeof o.apiVersion === 'string' ? o.apiVersion.slice(o.apiVersion.lastIndexOf('/') + 1) : '';
  return errors.badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${message}`);
}

export function parseFieldValidation(v: string | null): FieldValidation {
  if (v === null || v === '' || v === 'Warn') return 'Warn';
  if (v === 'Ignore' || v === 'Strict') return v;
  throw errors.badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
}

/** The Go reflect kind of a JSON value as the unstructured converter names it (ints preserved). */
function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  if (v === null) return 'invalid';
  switch (typeof v) {
    case 'object':
      return 'map';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return typeof v;
  }
}
