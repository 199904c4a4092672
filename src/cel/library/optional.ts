/**
 * Optional values for `optionalOldSelf` rules (cel-go optional types, the part CRD rules use):
 * optional.of, optional.none, hasValue, value, orValue. The parser of @bufbuild/cel has no
 * `.?field` syntax, so optionals come only from oldSelf and these functions.
 */
import { CelScalar, celFunc, celMap, celMethod, type CelFunc, type CelInput, type CelMap, type CelValue } from '@bufbuild/cel';
import { OPAQUE } from './opaque.js';

const { BOOL, DYN } = CelScalar;

export function optionalOf(v: CelInput | undefined): CelMap {
  return celMap(new Map<string, CelInput>(v === undefined ? [['@type', 'Optional']] : [['@type', 'Optional'], ['@value', v]]));
}

function inner(o: CelValue): { has: boolean; v: CelValue | undefined } {
  const m = o as CelMap;
  if (m?.get?.('@type') !== 'Optional') throw new Error('no such overload');
  return { has: m.has('@value'), v: m.get('@value') };
}

export const OPTIONALS: CelFunc[] = [
  celFunc('optional.of', [DYN], OPAQUE, (v) => optionalOf(v)),
  celFunc('optional.none', [], OPAQUE, () => optionalOf(undefined)),
  celMethod('hasValue', OPAQUE, [], BOOL, function () { return inner(this).has; }),
  celMethod('value', OPAQUE, [], DYN, function () {
    const o = inner(this);
    if (!o.has) throw new Error('optional.none() dereference');
    return o.v as never;
  }),
  celMethod('orValue', OPAQUE, [DYN], DYN, function (d) { const o = inner(this); return (o.has ? o.v : d) as never; }),
];
