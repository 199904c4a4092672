/**
 * CEL values of custom resource data: JSON converted as the structural schema types it
 * (upstream apiextensions UnstructuredToVal): `integer` as int (bigint), `number` as double,
 * int-or-string as int or string, `byte` strings as bytes, object properties under their
 * escaped names, additionalProperties maps with their keys as written, unknown fields (under
 * x-preserve-unknown-fields) with JSON's own types. Plus equality and ordering of CEL values
 * for the libraries (the evaluator's own are internal to @bufbuild/cel).
 */
import type { CelInput, CelMap, CelValue } from '@bufbuild/cel';
import { cel } from './lazy.js';
import { escapeName } from './escaping.js';
import { ownValue } from '../api/own-keys.js';

type Raw = Record<string, unknown>;
const isObj = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);

/** JSON without a schema (preserved unknown fields): whole numbers are ints. */
function dynamic(v: unknown): CelInput {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return cel().celList(v.map(dynamic));
  if (isObj(v)) return cel().celMap(new Map(Object.entries(v).map(([k, x]) => [k, dynamic(x)])));
  return v as CelInput;
}

function bytesOf(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'base64'));
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`1h30m`, `-1.5s`) in milliseconds, or undefined. */
export function durationMs(v: string): number | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(v);
  if (!m) return v === '0' ? 0 : undefined;
  let ms = 0;
  for (const [, n, u] of v.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * UNITS[u!]!;
  return m[1] === '-' ? -ms : ms;
}

/** Strings of the formats upstream types: byte as bytes, date and date-time as timestamps, duration as durations. */
function formatted(v: string, format: unknown): CelInput {
  if (format === 'byte') return bytesOf(v);
  if (format === 'date' || format === 'date-time') {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? v : (cel().timestampFromDate(d) as unknown as CelInput);
  }
  if (format === 'duration') {
    const ms = durationMs(v);
    return ms === undefined ? v : (cel().durationFromMs(ms) as unknown as CelInput);
  }
  return v;
}

/** The CEL value of v as schema s types it. */
export function toCelValue(v: unknown, s: Raw | undefined): CelInput {
  if (v === null || v === undefined) return null;
  if (!isObj(s)) return dynamic(v);
  if (typeof v === 'number') {
    if (s.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'string') return s.type === 'string' ? formatted(v, s.format) : v;
  if (Array.isArray(v)) {
    const items = isObj(s.items) ? s.items : undefined;
    return listOf(
      v.map((x) => toCelValue(x, items)),
      s,
    );
  }
  if (isObj(v)) return objectValue(v, s);
  return v as CelInput;
}

function objectValue(v: Raw, s: Raw): CelInput {
  const props = isObj(s.properties) ? s.properties : undefined;
  if (isObj(s.additionalProperties) && !props) {
    const elem = s.additionalProperties;
    return cel().celMap(new Map(Object.entries(v).map(([k, x]) => [k, toCelValue(x, elem)])));
  }
  const out = new Map<string, CelInput>();
  const preserve = s['x-plat-preserve-unknown-fields'] === true || s['x-plat-embedded-resource'] === true;
  for (const [k, x] of Object.entries(v)) {
    const ps = props && ownValue(props, k);
    if (ps === undefined && !preserve) continue;
    const name = escapeName(k);
    if (name !== undefined) out.set(name, isObj(ps) ? toCelValue(x, ps) : dynamic(x));
  }
  return cel().celMap(out);
}

/**
 * Lists with `x-plat-list-type: set` or `map` (upstream's unorderedSetList and mapList): their
 * equality ignores order, a map list's elements are matched by their key fields.
 */
const SET_LISTS = new WeakSet<object>();
const MAP_LISTS = new WeakMap<object, string[]>();

function listOf(items: CelInput[], s: Raw): CelInput {
  const list = cel().celList(items);
  const type = s['x-plat-list-type'];
  const keys = s['x-plat-list-map-keys'];
  if (type === 'set') SET_LISTS.add(list);
  else if (type === 'map' && Array.isArray(keys))
    MAP_LISTS.set(
      list,
      keys.map((k) => escapeName(String(k)) ?? String(k)),
    );
  return list;
}

type List = CelValue & { size: number; get(i: number): CelValue | undefined; [Symbol.iterator](): Iterator<CelValue> };

/** Equality of a set or map list with another list (same size, every element matched once, in any order). */
function unorderedEquals(a: List, b: List, keys: string[] | undefined, leaf: Leaf): boolean {
  if (a.size !== b.size) return false;
  const rest = [...b];
  const keyOf = (v: CelValue) => (keys && cel().isCelMap(v) ? keys.map((k) => v.get(k)) : undefined);
  for (const x of a) {
    const kx = keyOf(x);
    const i = rest.findIndex((y) => {
      const ky = keyOf(y);
      return kx && ky ? kx.every((k, j) => celEquals(k as CelValue, ky[j] as CelValue, leaf)) : celEquals(x, y, leaf);
    });
    if (i < 0 || !celEquals(x, rest[i]!, leaf)) return false;
    rest.splice(i, 1);
  }
  return true;
}

/** equality of values this module does not take apart (timestamps, durations): the evaluator's */
export type Leaf = (a: CelValue, b: CelValue) => boolean;

/** CEL equality of two values (numbers across int, uint and double compare by value; set and map lists unordered). */
export function celEquals(a: CelValue, b: CelValue, leaf: Leaf = (x, y) => x === y): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (cel().isCelList(a) && cel().isCelList(b)) {
    // the left operand decides, as cel-go dispatches Equal on it
    const keys = MAP_LISTS.get(a);
    if (keys || SET_LISTS.has(a)) return unorderedEquals(a as List, b as List, keys, leaf);
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i)!, b.get(i)!, leaf)) return false;
    return true;
  }
  if (cel().isCelMap(a) && cel().isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, x] of a) if (!b.has(k) || !celEquals(x, b.get(k)!, leaf)) return false;
    return true;
  }
  return a === b || (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && leaf(a, b));
}

/** a number's value for comparisons (int and uint exactly when they fit a double). */
function numeric(v: CelValue): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  if (cel().isCelUint(v)) return Number(v.value);
  return undefined;
}

/** CEL ordering of comparable values (numbers, strings, bools, bytes); throws for others. */
export function celCompare(a: CelValue, b: CelValue): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  throw new Error('no such overload');
}

/** An optional value (cel-go's optional library, ./library/optional.ts): optional.of(v), or optional.none() for undefined. */
export function optionalOf(v: CelInput | undefined): CelMap {
  return cel().celMap(
    new Map<string, CelInput>(
      v === undefined
        ? [['@type', 'Optional']]
        : [
            ['@type', 'Optional'],
            ['@value', v],
          ],
    ),
  );
}
