/**
 * Upstream's CEL `regex` library for CRDs (apiserver/pkg/cel/library/regex.go): find, findAll,
 * and the two-argument `matches(string, pattern)`. Patterns are compiled once and kept.
 */
import { CelScalar, celFunc, celMethod, listType, type CelFunc } from '@bufbuild/cel';
import { re2 } from '../re2.js';

const { STRING, INT, BOOL } = CelScalar;
/** The compiled pattern (RE2 syntax), kept for the next call. */
export function regexOf(pattern: string, flags = ''): RegExp {
  try {
    return re2(pattern, flags);
  } catch (e) {
    throw new Error(`error parsing regexp: ${(e as Error).message}`);
  }
}

function findAll(s: string, pattern: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  const out: string[] = [];
  for (const m of s.matchAll(regexOf(pattern, 'g'))) {
    out.push(m[0]);
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

export const REGEX: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (p) {
    const m = regexOf(p).exec(this);
    return m ? m[0] : '';
  }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (p) {
    return findAll(this, p, -1n);
  }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (p, n) {
    return findAll(this, p, n);
  }),
  celFunc('matches', [STRING, STRING], BOOL, (s, p) => regexOf(p).test(s)),
];

/** `<string>.matches(pattern)` with RE2 syntax (replaces the standard library's). */
export const MATCHES_METHOD = celMethod('matches', STRING, [STRING], BOOL, function (p) {
  return regexOf(p).test(this);
});
