/**
 * Static types of CEL expressions over a structural schema (upstream apiextensions
 * model.SchemaDeclType): `self` is typed from the schema it sits on, with the sizes the cost
 * estimator needs (maxLength, maxItems, maxProperties, or the most a request can hold).
 */
import type { CelType } from '@bufbuild/cel';
import { escapeName } from './escaping.js';

export type Raw = Record<string, unknown>;
export const isObj = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);

export type Kind =
  | 'dyn'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bool'
  | 'bytes'
  | 'null_type'
  | 'list'
  | 'map'
  | 'object'
  | 'type'
  | 'google.protobuf.Timestamp'
  | 'google.protobuf.Duration';

export interface T {
  k: Kind;
  /** list element or map value type */
  elem?: T;
  /** an object's schema (its properties are its fields) */
  schema?: Raw;
  /** the most characters (strings, bytes) or elements (lists, maps) a value of the type can have */
  max?: number;
  /** an optional (`a.?f`, `a[?i]`): the type of its value, so later optional qualifiers are checked too */
  opt?: T;
}

/** upstream's maximum request size, which bounds every unbounded string, list and map */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export const DYN: T = { k: 'dyn' };
export const BOOL: T = { k: 'bool' };
export const INT: T = { k: 'int' };
export const STRING: T = { k: 'string' };

/** the fewest bytes one element of this schema takes in JSON (with its separator) */
function minSize(s: Raw | undefined): number {
  if (!isObj(s)) return 2;
  if (s.type === 'string') return 3;
  if (s.type === 'boolean') return 5;
  if (s.type === 'object' || s.type === 'array') return 3;
  return 2;
}

/** The type of values of schema s. */
export function typeOfSchema(s: unknown): T {
  if (!isObj(s)) return DYN;
  if (s['x-plat-int-or-string'] === true) return DYN;
  switch (s.type) {
    case 'integer':
      return INT;
    case 'number':
      return { k: 'double' };
    case 'boolean':
      return BOOL;
    case 'string': {
      if (s.format === 'date' || s.format === 'date-time') return { k: 'google.protobuf.Timestamp' };
      if (s.format === 'duration') return { k: 'google.protobuf.Duration' };
      // an enum bounds a string by its longest value (upstream's estimateMaxStringEnumLength)
      const longest = Array.isArray(s.enum)
        ? Math.max(0, ...s.enum.map((e) => (typeof e === 'string' ? e.length : 0)))
        : undefined;
      const max = typeof s.maxLength === 'number' ? s.maxLength : (longest ?? MAX_REQUEST_BYTES);
      return { k: s.format === 'byte' ? 'bytes' : 'string', max };
    }
    case 'array': {
      const max = typeof s.maxItems === 'number' ? s.maxItems : Math.floor(MAX_REQUEST_BYTES / minSize(s.items as Raw));
      return { k: 'list', elem: typeOfSchema(s.items), max };
    }
    case 'object':
    case undefined:
      return objectType(s);
    default:
      return DYN;
  }
}

function objectType(s: Raw): T {
  const maxProps = typeof s.maxProperties === 'number' ? s.maxProperties : Math.floor(MAX_REQUEST_BYTES / 6);
  if (isObj(s.additionalProperties) && !isObj(s.properties))
    return { k: 'map', elem: typeOfSchema(s.additionalProperties), max: maxProps };
  if (isObj(s.properties) || s['x-plat-embedded-resource'] === true) return { k: 'object', schema: s, max: maxProps };
  if (s['x-plat-preserve-unknown-fields'] === true || s.type === undefined) return DYN;
  return { k: 'object', schema: s, max: 0 };
}

/**
 * The type of field `ident` (escaped) of an object type: undefined when the schema has no
 * such field; dyn for fields kept by x-preserve-unknown-fields.
 */
export function fieldType(obj: T, ident: string): T | undefined {
  const s = obj.schema ?? {};
  const props = isObj(s.properties) ? s.properties : {};
  for (const [name, ps] of Object.entries(props)) if (escapeName(name) === ident) return typeOfSchema(ps);
  if (s['x-plat-embedded-resource'] === true && ['apiVersion', 'kind', 'metadata'].includes(ident))
    return ident === 'metadata' ? DYN : STRING;
  if (s['x-plat-preserve-unknown-fields'] === true) return DYN;
  return undefined;
}

/** cel-go's name of a type in messages (`int`, `list(string)`, `map(string, int)`). */
export function typeName(t: T): string {
  if (t.k === 'list') return `list(${typeName(t.elem ?? DYN)})`;
  if (t.k === 'map') return `map(string, ${typeName(t.elem ?? DYN)})`;
  if (t.k === 'object') return 'object';
  return t.k;
}

/** The static type of a @bufbuild/cel signature type. */
export function fromCelType(c: CelType): T {
  if (c.kind === 'scalar') return c.scalar === 'dyn' ? DYN : { k: c.scalar as Kind };
  if (c.kind === 'list') return { k: 'list', elem: fromCelType(c.element) };
  if (c.kind === 'map') return { k: 'map', elem: fromCelType(c.value) };
  return c.name === 'google.protobuf.Timestamp' || c.name === 'google.protobuf.Duration' ? { k: c.name } : DYN;
}

/** Can a value of static type `arg` be passed where a function declares `param`? */
export function accepts(param: CelType, arg: T): boolean {
  if (arg.k === 'dyn') return true;
  if (param.kind === 'scalar') return param.scalar === 'dyn' || param.scalar === arg.k;
  if (param.kind === 'list') return arg.k === 'list';
  if (param.kind === 'map') return arg.k === 'map' || arg.k === 'object';
  return param.name === arg.k;
}
