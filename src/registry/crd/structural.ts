/**
 * Custom resource schemas (a CRD version's openAPIV3Schema): compiled to the SchemaNode that
 * pruning, merge patch and apply use, and value validation with (defaulting is in schema-defaults.ts)
 * upstream's field paths, reasons and messages (apiextensions-apiserver's
 * kubeOpenAPIResultToFieldErrors over kube-openapi's validator).
 */
import type { StatusCause } from '../../api/status.js';
import { schemaIndex, type SchemaNode } from '../../schema/schema.js';
import { same } from '../strategies/field-errors.js';
import { checkComposition } from './composition.js';
import { re2 } from '../../cel/re2.js';

/** a schema level as written in the CRD (also used by schema-defaults.ts) */
export type Raw = Record<string, unknown>;
const OBJECT_META = 'io.plat.apimachinery.pkg.apis.meta.v1.ObjectMeta';
export const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The node for one schema level; scalars carry no type (values are checked by validate, with 422s). */
function compile(s: unknown): SchemaNode {
  if (!isObj(s)) return { kind: 'any', preserveUnknown: true };
  const preserve = s['x-plat-preserve-unknown-fields'] === true;
  if (s['x-plat-int-or-string'] || ((s.anyOf || s.oneOf) && !s.type && !s.properties)) return { kind: 'scalar' };
  let node: SchemaNode;
  if (s.type === 'array') {
    // list and map types were checked with the CRD (crd-validation.ts)
    node = {
      kind: 'list',
      elem: compile(s.items),
      listType: (s['x-plat-list-type'] as SchemaNode['listType']) ?? 'atomic',
    };
    if (Array.isArray(s['x-plat-list-map-keys'])) node.mapKeys = s['x-plat-list-map-keys'];
  } else if (s.type === 'object' || s.properties || s['x-plat-embedded-resource']) {
    // properties beside `additionalProperties: true`: a struct keeping unknown fields (upstream pruning)
    const keepsUnknown = s.additionalProperties === true && isObj(s.properties);
    if (isObj(s.additionalProperties) || (s.additionalProperties === true && !keepsUnknown)) {
      node = {
        kind: 'map',
        elem:
          s.additionalProperties === true ? { kind: 'any', preserveUnknown: true } : compile(s.additionalProperties),
      };
    } else if (!s.properties && !s['x-plat-embedded-resource']) {
      node = preserve ? { kind: 'any', preserveUnknown: true } : { kind: 'struct', props: {} };
    } else {
      const props: Record<string, SchemaNode> = {};
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Raw>)) props[k] = compile(v);
      if (s['x-plat-embedded-resource']) {
        props.apiVersion ??= { kind: 'scalar' };
        props.kind ??= { kind: 'scalar' };
        props.metadata ??= { kind: 'any', preserveUnknown: true };
      }
      node = { kind: 'struct', props };
      if (Array.isArray(s.required)) node.required = s.required;
    }
    if (preserve || keepsUnknown) node.preserveUnknown = true;
    if (s['x-plat-map-type']) node.mapType = s['x-plat-map-type'] as SchemaNode['mapType'];
  } else {
    node = preserve ? { kind: 'any', preserveUnknown: true } : { kind: 'scalar' };
  }
  return node;
}

/** The whole object's node: apiVersion, kind and metadata (ObjectMeta) besides the schema's own fields. */
export function compileCustomSchema(schema: Raw): SchemaNode {
  const root = compile({ ...schema, type: 'object' });
  if (root.kind !== 'struct') return { kind: 'any', preserveUnknown: true };
  root.props = {
    ...root.props,
    apiVersion: { kind: 'scalar', scalarType: 'string' },
    kind: { kind: 'scalar', scalarType: 'string' },
    metadata: schemaIndex().definition(OBJECT_META),
  };
  return root;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Go's %v-ish rendering of a value in an `Invalid value:` message (strings quoted). */
function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (isObj(v) || Array.isArray(v)) return `"${JSON.stringify(v).replace(/"/g, '\\"')}"`;
  return String(v);
}

const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  hostname:
    /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/,
};

interface Ctx {
  causes: StatusCause[];
}

const invalid = (c: Ctx, field: string, value: unknown, why: string): void => {
  c.causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${shown(value)}: ${why}`, field });
};

function typeMatches(want: string, v: unknown): boolean {
  const t = typeOf(v);
  if (want === 'number') return t === 'number' || t === 'integer';
  return t === want;
}

/**
 * Validates one value against its schema; `path` is upstream's field path (`spec.replicas`).
 * old is the correlated stored value on update: an unchanged value is not validated again
 * (upstream validation ratcheting, CRDValidationRatcheting).
 */
function check(v: unknown, s: Raw, path: string, c: Ctx, old?: unknown): void {
  if (old !== undefined && same(v, old)) return;
  const at = path || '<root>';
  if (v === null) {
    if (s.nullable === true || (s['x-plat-preserve-unknown-fields'] === true && !s.type)) return;
    if (s.type)
      c.causes.push({
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: "null": ${at} in body must be of type ${s.type}: "null"`,
        field: path,
      });
    return;
  }
  if (s['x-plat-int-or-string']) {
    const t = typeOf(v);
    if (t !== 'integer' && t !== 'string')
      c.causes.push({
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: "${t}": ${at} in body must be of type integer,string: ${shown(v)}`,
        field: path,
      });
  } else if (s.type && !typeMatches(String(s.type), v)) {
    c.causes.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: "${typeOf(v)}": ${at} in body must be of type ${String(s.type)}: ${shown(v)}`,
      field: path,
    });
    return;
  }
  if (
    Array.isArray(s.enum) &&
    !s.enum.some((e: unknown) => e === v || (typeof e === 'object' && JSON.stringify(e) === JSON.stringify(v)))
  ) {
    c.causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${shown(v)}: supported values: ${s.enum.map(shown).join(', ')}`,
      field: path,
    });
  }
  if (s.allOf || s.anyOf || s.oneOf || s.not) {
    checkComposition(v, s, path, at, c.causes, (x, sub, p, causes) => check(x, sub, p, { causes }));
  }
  if (typeof v === 'string') checkString(v, s, path, at, c);
  else if (typeof v === 'number') checkNumber(v, s, path, at, c);
  else if (Array.isArray(v)) checkArray(v, s, path, at, c, Array.isArray(old) ? old : undefined);
  else if (isObj(v)) checkObject(v, s, path, c, isObj(old) ? old : undefined);
}

/** compiled patterns (null: not a valid expression here, so not checked) */
const PATTERNS = new Map<string, RegExp | null>();

function patternOf(p: string): RegExp | null {
  let re = PATTERNS.get(p);
  if (re === undefined) {
    try {
      re = re2(p);
    } catch {
      re = null;
    }
    if (PATTERNS.size < 10_000) PATTERNS.set(p, re);
  }
  return re;
}

/** length in characters (code points), counted only when the UTF-16 length is not conclusive */
const chars = (v: string, limit: number): number => (v.length <= limit ? v.length : [...v].length);

function checkString(v: string, s: Raw, path: string, at: string, c: Ctx): void {
  if (typeof s.maxLength === 'number' && chars(v, s.maxLength) > s.maxLength) {
    c.causes.push({
      reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${s.maxLength} bytes`,
      field: path,
    });
  }
  if (typeof s.minLength === 'number' && [...v].length < s.minLength)
    invalid(c, path, v, `${at} in body should be at least ${s.minLength} chars long`);
  if (typeof s.pattern === 'string') {
    const re = patternOf(s.pattern);
    if (re && !re.test(v)) invalid(c, path, v, `${at} in body should match '${s.pattern}'`);
  }
  const f = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  if (f && !f.test(v)) invalid(c, path, v, `${at} in body must be of type ${s.format}: ${JSON.stringify(v)}`);
}

function checkNumber(v: number, s: Raw, path: string, at: string, c: Ctx): void {
  if (typeof s.maximum === 'number' && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
    invalid(c, path, v, `${at} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`);
  }
  if (typeof s.minimum === 'number' && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
    invalid(c, path, v, `${at} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`);
  }
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) {
    invalid(c, path, v, `${at} in body should be a multiple of ${s.multipleOf}`);
  }
}

/** The stored item an item correlates with: by keys (map lists), by value (sets); atomic lists do not correlate. */
function correlated(s: Raw, item: unknown, olds: unknown[] | undefined): unknown {
  if (!olds) return undefined;
  const keys = s['x-plat-list-map-keys'];
  if (s['x-plat-list-type'] === 'map' && Array.isArray(keys) && isObj(item))
    return olds.find((o) => isObj(o) && keys.every((k) => same(o[k], item[k])));
  if (s['x-plat-list-type'] === 'set') return olds.find((o) => same(o, item));
  return undefined;
}

/** Go's %#v of a list-map item's keys: `map[string]interface {}{"name":"a"}`. */
function keysShown(keys: string[], x: Raw): string {
  const parts = keys
    .filter((k) => x[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${typeof x[k] === 'string' ? JSON.stringify(x[k]) : String(x[k])}`);
  return `map[string]interface {}{${parts.join(', ')}}`;
}

/** x-plat-list-type map: no two items with the same key values (upstream: `Duplicate value` on the later item). */
function duplicateKeys(v: unknown[], keys: string[], path: string, c: Ctx): void {
  const seen = new Set<string>();
  v.forEach((x, i) => {
    if (!isObj(x)) return;
    const k = JSON.stringify(keys.map((key) => x[key] ?? null));
    if (seen.has(k))
      c.causes.push({
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${keysShown(keys, x)}`,
        field: `${path}[${i}]`,
      });
    seen.add(k);
  });
}

function checkArray(v: unknown[], s: Raw, path: string, at: string, c: Ctx, olds?: unknown[]): void {
  if (typeof s.maxItems === 'number' && v.length > s.maxItems) {
    c.causes.push({
      reason: 'FieldValueTooMany',
      message: `Too many: ${v.length}: must have at most ${s.maxItems} items`,
      field: path,
    });
  }
  if (typeof s.minItems === 'number' && v.length < s.minItems)
    invalid(c, path, v, `${at} in body should have at least ${s.minItems} items`);
  if (s.uniqueItems === true && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) {
    c.causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${shown(v)}`, field: path });
  }
  if (s['x-plat-list-type'] === 'set') {
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const k = JSON.stringify(x);
      if (seen.has(k))
        c.causes.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${shown(x)}`,
          field: `${path}[${i}]`,
        });
      seen.add(k);
    });
  }
  if (s['x-plat-list-type'] === 'map' && Array.isArray(s['x-plat-list-map-keys']))
    duplicateKeys(v, s['x-plat-list-map-keys'], path, c);
  const items = s.items;
  if (isObj(items)) v.forEach((x, i) => check(x, items, `${path}[${i}]`, c, correlated(s, x, olds)));
}

/** a schema's properties as entries, computed once per schema object */
const ENTRIES = new WeakMap<Raw, [string, unknown][]>();
function entriesOf(props: Raw): [string, unknown][] {
  let e = ENTRIES.get(props);
  if (!e) ENTRIES.set(props, (e = Object.entries(props)));
  return e;
}

function checkObject(v: Raw, s: Raw, path: string, c: Ctx, old?: Raw): void {
  const child = (k: string) => (path ? `${path}.${k}` : k);
  if (s['x-plat-embedded-resource']) {
    for (const k of ['apiVersion', 'kind'])
      if (!v[k])
        c.causes.push({ reason: 'FieldValueRequired', message: 'Required value: must not be empty', field: child(k) });
  }
  for (const r of Array.isArray(s.required) ? s.required : []) {
    if (v[r] === undefined) c.causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: child(r) });
  }
  if (typeof s.maxProperties === 'number' && Object.keys(v).length > s.maxProperties) {
    c.causes.push({
      reason: 'FieldValueTooMany',
      message: `Too many: ${Object.keys(v).length}: must have at most ${s.maxProperties} items`,
      field: path,
    });
  }
  if (typeof s.minProperties === 'number' && Object.keys(v).length < s.minProperties) {
    invalid(c, path, v, `${path || '<root>'} in body should have at least ${s.minProperties} properties`);
  }
  if (isObj(s.properties)) {
    for (const [k, ps] of entriesOf(s.properties))
      if (v[k] !== undefined && isObj(ps)) check(v[k], ps, child(k), c, old?.[k]);
  } else if (isObj(s.additionalProperties)) {
    for (const k of Object.keys(v)) check(v[k], s.additionalProperties, `${path}[${k}]`, c, old?.[k]);
  }
}

/** The root schema without apiVersion, kind and metadata (the server checks those); built once per schema. */
export function rootSchema(schema: Raw): Raw {
  const props = isObj(schema.properties) ? { ...schema.properties } : undefined;
  if (props) {
    delete props.metadata;
    delete props.apiVersion;
    delete props.kind;
  }
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r: string) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind')
    : undefined;
  return { ...schema, ...(props ? { properties: props } : {}), ...(required ? { required } : {}) };
}

/**
 * Causes for every field of obj (but metadata, apiVersion, kind) that breaks the schema;
 * root is rootSchema(schema), computed once.
 */
export function validateCustom(obj: object, root: Raw, old?: unknown): StatusCause[] {
  const c: Ctx = { causes: [] };
  // an object's own fields, read by name
  checkObject(obj as Raw, root, '', c, isObj(old) ? old : undefined);
  return c.causes;
}

/** Causes for one value against its schema (e.g. a default), field paths starting at path. */
export function checkValue(v: unknown, schema: Raw, path: string): StatusCause[] {
  const c: Ctx = { causes: [] };
  check(v, schema, path, c);
  return c.causes;
}

/** The value at a simple JSON path (`.spec.replicas`), or undefined. */
export function atPath(obj: unknown, path: string): unknown {
  let v: unknown = obj;
  for (const p of path.replace(/^\./, '').split('.')) {
    if (p === '') continue;
    if (!isObj(v)) return undefined;
    v = v[p];
  }
  return v;
}

/** Sets the value at a simple JSON path, creating objects on the way. */
export function setPath(obj: object, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let v = obj as Record<string, unknown>; // an object's own properties, set by name
  for (const p of parts.slice(0, -1)) {
    const child = v[p];
    v = isObj(child) ? child : (v[p] = {});
  }
  v[parts[parts.length - 1]!] = value;
}

/**
 * The schema with upstream clients' extension names (`x-kubernetes-*`, as kubectl users write
 * CRDs) also under this server's (`x-plat-*`); the stored CRD keeps what was written.
 */
export function withPlatExtensions(s: Raw): Raw;
export function withPlatExtensions(s: unknown): unknown;
export function withPlatExtensions(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(withPlatExtensions);
  if (!isObj(s)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s))
    out[k] = k === 'default' || k === 'example' || k === 'enum' ? v : withPlatExtensions(v);
  for (const k of Object.keys(s)) {
    if (k.startsWith('x-kubernetes-')) out['x-plat-' + k.slice('x-kubernetes-'.length)] ??= out[k];
  }
  return out;
}
