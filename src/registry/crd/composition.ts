/**
 * allOf, anyOf, oneOf and not in custom resource schemas: value validations only (structural
 * schemas keep types and properties in the main schema), checked as kube-openapi does, with
 * its messages (`"spec.mode" must validate one and only one schema (oneOf). Found none valid`)
 * followed by the causes of the alternative that came closest.
 */
import type { StatusCause } from '../../api/status.js';

type Raw = Record<string, unknown>;
/** validates v against one schema into causes (structural.ts's check) */
export type Checker = (v: unknown, s: Raw, path: string, causes: StatusCause[]) => void;

const composite = (path: string, message: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: "null": ${message}`,
  field: path,
});

/** The causes of each alternative (an empty list: v satisfies it). */
function tryEach(v: unknown, subs: unknown[], path: string, check: Checker): StatusCause[][] {
  return subs
    .filter((x): x is Raw => !!x && typeof x === 'object')
    .map((sub) => {
      const out: StatusCause[] = [];
      check(v, sub, path, out);
      return out;
    });
}

const best = (results: StatusCause[][]): StatusCause[] =>
  results.reduce((a, b) => (b.length < a.length ? b : a), results[0] ?? []);

/** Appends the causes of s's allOf / anyOf / oneOf / not for value v at path (`at`: path or `<root>`). */
export function checkComposition(
  v: unknown,
  s: Raw,
  path: string,
  at: string,
  causes: StatusCause[],
  check: Checker,
): void {
  if (Array.isArray(s.allOf)) {
    const failed = tryEach(v, s.allOf, path, check).filter((r) => r.length);
    if (failed.length) {
      causes.push(composite(path, `"${at}" must validate all the schemas (allOf)`));
      for (const r of failed) causes.push(...r);
    }
  }
  if (Array.isArray(s.anyOf)) {
    const results = tryEach(v, s.anyOf, path, check);
    if (results.length && !results.some((r) => r.length === 0)) {
      causes.push(composite(path, `"${at}" must validate at least one schema (anyOf)`), ...best(results));
    }
  }
  if (Array.isArray(s.oneOf)) {
    const results = tryEach(v, s.oneOf, path, check);
    const valid = results.filter((r) => r.length === 0).length;
    if (results.length && valid !== 1) {
      causes.push(
        composite(
          path,
          `"${at}" must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`,
        ),
      );
      if (valid === 0) causes.push(...best(results));
    }
  }
  if (s.not && typeof s.not === 'object' && tryEach(v, [s.not], path, check)[0]!.length === 0) {
    causes.push(composite(path, `"${at}" must not validate the schema (not)`));
  }
}
