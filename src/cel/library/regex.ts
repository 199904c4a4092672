/**
 * Upstream's CEL `regex` library for CRDs (apiserver/pkg/cel/library/regex.go): find, findAll,
 * and the two-argument `matches(string, pattern)`. Patterns are compiled once and kept.
 */
import { CelScalar, celFunc, celMethod, listType, type CelFunc } from '@bufbuild/cel';

const { STRING, INT, BOOL } = CelScalar;
const CACHE = new Map<string, RegExp>();

/** The compiled pattern (global flag: for findAll), kept for the next call. */
export function regexOf(pattern: string, flags = 'u'): RegExp {
  const key = flags + '/' + pattern;
  let re = CACHE.get(key);
  if (!re) {
    try { re = new RegExp(pattern, flags); } catch (e) { throw new Error(`error parsing regexp: ${(e as Error).message}`); }
    if (CACHE.size < 10_000) CACHE.set(key, re);
  }
  re.lastIndex = 0;
  return re;
}

function findAll(s: string, pattern: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  const out: string[] = [];
  for (const m of s.matchAll(regexOf(pattern, 'gu'))) {
    out.push(m[0]);
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

export const REGEX: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (p) { const m = regexOf(p).exec(this); return m ? m[0] : ''; }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (p) { return findAll(this, p, -1n); }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (p, n) { return findAll(this, p, n); }),
  celFunc('matches', [STRING, STRING], BOOL, (s, p) => regexOf(p).test(s)),
];
