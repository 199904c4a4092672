/**
 * Optional values (cel-go's optional library, on for CRD rules in v1.32): optional.of,
 * optional.ofNonZeroValue, optional.none, hasValue, value, or, orValue, and the optional
 * selection `a.?f` and index `a[?i]` (parsed through ../optional-syntax.ts into `@optsel` and
 * `@optindex` calls). Also oldSelf of `optionalOldSelf` rules.
 */
import {
  CelScalar,
  celFunc,
  celMethod,
  isCelList,
  isCelMap,
  type CelFunc,
  type CelInput,
  type CelMap,
  type CelValue,
} from '@bufbuild/cel';
import { OPAQUE } from './opaque.js';
import { optionalOf } from '../values.js';

const { BOOL, DYN, STRING } = CelScalar;

function isOptional(o: CelValue | undefined): o is CelMap {
  return isCelMap(o) && o.get('@type') === 'Optional';
}

function inner(o: CelValue): { has: boolean; v: CelValue | undefined } {
  if (!isOptional(o)) throw new Error('no such overload');
  return { has: o.has('@value'), v: o.get('@value') };
}

/** The operand of an optional qualifier: an optional's value (undefined: none), or the value itself. */
function operand(o: CelValue): CelValue | undefined {
  if (!isOptional(o)) return o;
  return inner(o).v;
}

/** `a.?f`: optional.of(a.f) when a has f, else optional.none(); a may itself be an optional. */
function optSelect(o: CelValue, field: string): CelMap {
  const v = operand(o);
  if (v === undefined) return optionalOf(undefined);
  if (!isCelMap(v)) throw new Error('no such overload');
  return optionalOf(v.has(field) ? (v.get(field) as CelInput) : undefined);
}

/** `a[?i]`: optional.of(a[i]) for an index in range or a present key, else optional.none(). */
function optIndex(o: CelValue, index: CelValue): CelMap {
  const v = operand(o);
  if (v === undefined) return optionalOf(undefined);
  if (isCelList(v)) {
    if (typeof index !== 'bigint' && typeof index !== 'number') throw new Error('no such overload');
    const i = Number(index);
    return optionalOf(Number.isInteger(i) && i >= 0 && i < v.size ? (v.get(i) as CelInput) : undefined);
  }
  if (isCelMap(v)) return optionalOf(v.has(index as never) ? (v.get(index as never) as CelInput) : undefined);
  throw new Error('no such overload');
}

/** cel-go's zero values: false, 0, "", empty bytes, lists and maps, null. */
function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v) || isCelMap(v)) return v.size === 0;
  return false;
}

export const OPTIONALS: CelFunc[] = [
  celFunc('optional.of', [DYN], OPAQUE, (v) => optionalOf(v)),
  celFunc('optional.none', [], OPAQUE, () => optionalOf(undefined)),
  celFunc('optional.ofNonZeroValue', [DYN], OPAQUE, (v) => optionalOf(isZero(v) ? undefined : v)),
  celFunc('@optsel', [DYN, STRING], OPAQUE, (o, f) => optSelect(o, f)),
  celFunc('@optindex', [DYN, DYN], OPAQUE, (o, i) => optIndex(o, i)),
  celMethod('or', OPAQUE, [OPAQUE], OPAQUE, function (other) {
    if (inner(this).has) return this as never;
    inner(other); // an argument that is not an optional fails here
    return other as never;
  }),
  celMethod('hasValue', OPAQUE, [], BOOL, function () {
    return inner(this).has;
  }),
  celMethod('value', OPAQUE, [], DYN, function () {
    const o = inner(this);
    if (!o.has) throw new Error('optional.none() dereference');
    return o.v as never;
  }),
  celMethod('orValue', OPAQUE, [DYN], DYN, function (d) {
    const o = inner(this);
    return (o.has ? o.v : d) as never;
  }),
];
