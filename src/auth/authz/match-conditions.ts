/**
 * CEL matchConditions of an authorization webhook (upstream's authorizer matcher), compiled
 * once when the configuration is loaded and evaluated over `request` (the SubjectAccessReview
 * v1 spec as plain data: absent fields are absent, so `has(request.resourceAttributes)` works
 * and reading an absent field is an evaluation error).
 *
 * Logic, in order: any condition false → skip the webhook (no opinion); otherwise any error →
 * the failure policy decides; all true → call the webhook.
 */
import { cel, standardCelEnv } from '../../cel/lazy.js';

export const MAX_MATCH_CONDITIONS = 64;

type Program = (ctx: { request: unknown }) => unknown;

export type MatchResult = { matches: true } | { matches: false } | { error: string };

/** Compiles one expression; throws with the compiler's message. */
export function compileCondition(expression: string): Program {
  return cel().plan(standardCelEnv(), cel().parse(expression)) as unknown as Program;
}

export class MatchConditions {
  private readonly programs: { expression: string; run: Program }[];

  /** Throws on the first expression that does not compile (validation reports them all first). */
  constructor(expressions: readonly string[]) {
    this.programs = expressions.map((expression) => ({ expression, run: compileCondition(expression) }));
  }

  get size(): number {
    return this.programs.length;
  }

  evaluate(request: unknown): MatchResult {
    const errors: string[] = [];
    for (const p of this.programs) {
      let v: unknown;
      try {
        v = p.run({ request });
      } catch (e) {
        v = e;
      }
      if (v === false) return { matches: false };
      if (v === true) continue;
      if (cel().isCelError(v) || v instanceof Error)
        errors.push(`expression '${p.expression}' resulted in error: ${(v as Error).message}`);
      else errors.push(`expression '${p.expression}' resulted in error: must evaluate to bool`);
    }
    return errors.length ? { error: errors.join(', ') } : { matches: true };
  }
}
