/**
 * CEL for authentication configuration, with @bufbuild/cel: expressions are parsed and planned
 * once (a syntax error is a startup error naming the field) and evaluated over plain objects
 * (`claims`, `user`). Results are converted back to plain JS values.
 */
import { cel, standardCelEnv } from '../../cel/lazy.js';

export type Program = (vars: Record<string, unknown>) => unknown;

/** Compiles an expression; throws `compilation failed: ...` on a syntax error. */
export function compile(expression: string): Program {
  let p: ReturnType<ReturnType<typeof cel>['plan']>;
  try {
    p = cel().plan(standardCelEnv(), cel().parse(expression));
  } catch (e) {
    throw new Error(`compilation failed: ${(e as Error).message}`);
  }
  return (vars) => {
    const out = p(vars as never);
    if (cel().isCelError(out)) throw new Error((out as Error).message);
    return toJs(out);
  };
}

function toJs(v: unknown): unknown {
  if (cel().isCelList(v)) return [...v].map(toJs);
  if (cel().isCelMap(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, val] of v.entries()) o[String(k)] = toJs(val);
    return o;
  }
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** Does the expression read `claims.<name>` (field or has() access)? A syntactic check, as upstream's. */
export function usesClaim(expression: string, name: string): boolean {
  return new RegExp(`\\bclaims\\s*\\.\\s*${name}\\b|\\bclaims\\s*\\[\\s*["']${name}["']\\s*\\]`).test(expression);
}
