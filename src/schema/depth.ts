/**
 * Nesting-depth limit for request bodies (issue 12: no unbounded recursion on hostile input),
 * one limit for every encoding (issue 26: JSON, YAML, CBOR, Protobuf across nested envelopes,
 * and what a patch produces), the whole object being level 1. Upstream's JSON decoder stops at
 * 10,000 levels and its CBOR decoder at 64; this server stops at MAX_NESTING_DEPTH because the
 * JavaScript YAML decoder recurses per level and overflows the stack near 5,000 levels (the
 * encoder, src/codec/yaml-encoder.ts, does not), and what one encoding accepts every other must serve.
 */
export const MAX_NESTING_DEPTH = 1000;

export class DepthError extends Error {
  constructor() {
    super(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
  }
}

/**
 * Throws DepthError when `[`/`{` nest deeper than `limit` (default: the whole limit; less for a
 * text embedded below the top of an object) outside strings. One pass; a text shorter than
 * the limit cannot nest that deep and is not scanned.
 */
export function checkBracketDepth(text: string, limit = MAX_NESTING_DEPTH): void {
  if (text.length <= limit || openersAtMost(text, '{', limit) + openersAtMost(text, '[', limit) <= limit) return;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // skip a string by jumping from quote to quote (native indexOf, not a loop per character:
      // this scan runs on every decoded body and stored object); a quote ends the string when
      // an even run of backslashes precedes it
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) {
          i = text.length;
          break;
        }
        let b = q - 1;
        while (text.charCodeAt(b) === 92) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > limit) throw new DepthError();
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
}

/**
 * How often `ch` occurs in text, counting no further than limit + 1: a text with no more
 * openers than the limit, wherever they are, cannot nest deeper (the common case, answered by
 * a few native indexOf jumps instead of a scan per character).
 */
function openersAtMost(text: string, ch: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf(ch); i >= 0 && n <= limit; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/**
 * Throws DepthError when arrays and objects nest deeper than the limit in a decoded value;
 * `level` is the level of `value` itself (1 for a whole object). Iterative with an explicit
 * stack and linear in the value, so an over-deep value is measured, never recursed into.
 */
export function checkValueDepth(value: unknown, level = 1): void {
  const stack: unknown[] = [value];
  const levels: number[] = [level];
  while (stack.length) {
    const v = stack.pop();
    const l = levels.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (l > MAX_NESTING_DEPTH) throw new DepthError();
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) {
      if (c !== null && typeof c === 'object') {
        stack.push(c);
        levels.push(l + 1);
      }
    }
  }
}

/** Whether `[`/`{` nest deeper than the limit in a JSON text (checkBracketDepth as a test). */
export function exceedsDepth(text: string): boolean {
  try {
    checkBracketDepth(text);
    return false;
  } catch (e) {
    if (e instanceof DepthError) return true;
    throw e;
  }
}

export class CycleError extends Error {
  constructor() {
    super('recursive alias: the document contains itself');
  }
}
