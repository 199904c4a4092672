/**
 * Compiling one validation rule (or messageExpression) of a CRD schema: parse, the static pass
 * (identifiers, fields, overloads, result type, estimated cost), then a plan in the metered
 * environment. Done once per CRD version; evaluation reuses the plan.
 */
import type { parse } from '@bufbuild/cel';
import { COST_EXCEEDED } from './env.js';
import { cel, celEnvs } from './lazy.js';
import { Analyzer, type Issue, type Node } from './analyze.js';
import { lowerOptionals, rewriteOptionalSyntax } from './optional-syntax.js';
import { DYN, typeOfSchema, type Raw, type T } from './types.js';

export type Program = (vars: Record<string, unknown>) => unknown;

export interface Compiled {
  program?: Program;
  /** `compilation failed: ...` and the like, as upstream words them */
  error?: string;
  usesOldSelf: boolean;
  /** the estimated worst-case cost of one evaluation */
  cost: number;
}

/** cel-go's issue text: `ERROR: <input>:1:6: undefined field 'foo'` with the line and a caret under the column. */
export function issuesText(src: string, issues: Issue[]): string {
  return [...issues]
    .sort((a, b) => a.offset - b.offset)
    .map(({ offset, message }) => {
      const before = src.slice(0, offset);
      const line = before.split('\n').length;
      const start = before.lastIndexOf('\n') + 1;
      const col = offset - start;
      const text = src.slice(start).split('\n')[0];
      return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
    })
    .join('\n');
}

function syntaxIssue(src: string, e: Error): Issue {
  const m = /^<input>:(\d+):(\d+): (.*)$/s.exec(e.message);
  if (!m) return { offset: 0, message: `Syntax error: ${e.message}` };
  const lines = src.split('\n');
  const offset = lines.slice(0, Number(m[1]) - 1).reduce((a, l) => a + l.length + 1, 0) + Number(m[2]) - 1;
  return { offset, message: `Syntax error: ${m[3]}` };
}

export interface RuleScope {
  /** the schema the rule sits on (self's type) */
  schema: Raw;
  /** oldSelf is optional(self) (optionalOldSelf: true) */
  optionalOldSelf?: boolean;
}

/** Compiles src over self (and oldSelf); want is the result type the expression must have (any: no check). */
export function compileExpression(src: string, scope: RuleScope, want: 'bool' | 'string' | 'any'): Compiled {
  let parsed: ReturnType<typeof parse>;
  const rewritten = rewriteOptionalSyntax(src);
  const at = (issues: Issue[]) => issues.map((i) => ({ ...i, offset: rewritten.original(i.offset) }));
  try {
    parsed = cel().parse(rewritten.text);
  } catch (e) {
    return {
      error: `compilation failed: ${issuesText(src, at([syntaxIssue(rewritten.text, e as Error)]))}`,
      usesOldSelf: false,
      cost: 0,
    };
  }
  lowerOptionals(parsed.expr as unknown as Node);
  const self: T = typeOfSchema(scope.schema);
  const vars = new Map<string, T>([
    ['self', self],
    ['oldSelf', scope.optionalOldSelf ? { k: 'map', elem: DYN } : self],
  ]);
  const analyzer = new Analyzer((parsed.sourceInfo?.positions as unknown as Record<string, number>) ?? {});
  const result = analyzer.run(parsed.expr as unknown as Node, { vars });
  const base = { usesOldSelf: analyzer.usesOldSelf, cost: result.cost };
  if (analyzer.issues.length) return { ...base, error: `compilation failed: ${issuesText(src, at(analyzer.issues))}` };
  if (want !== 'any' && result.t.k !== want && result.t.k !== 'dyn') {
    return { ...base, error: want === 'bool' ? 'cel expression must evaluate to a bool' : 'must evaluate to string' };
  }
  return { ...base, program: cel().plan(celEnvs().RULE_ENV, parsed) as unknown as Program };
}

export type Outcome = { value: unknown } | { error: string; cost?: true };

/** Runs a compiled program; errors come back with cel-go's wording (`no such key: x`). */
export function evaluate(program: Program, vars: Record<string, unknown>): Outcome {
  const r = program(vars);
  if (!cel().isCelError(r)) return { value: r };
  const msg = r.message;
  if (msg.includes(COST_EXCEEDED)) return { error: COST_EXCEEDED, cost: true };
  const field = /^field not found: (.*)$/.exec(msg) ?? /^no such key: (.*)$/.exec(msg);
  if (field) return { error: `no such key: ${field[1]}` };
  if (msg.startsWith('found no matching overload') || msg.startsWith('no such overload'))
    return { error: 'no such overload' };
  return { error: msg };
}
