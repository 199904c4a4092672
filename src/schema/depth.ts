/**
 * Nesting-depth limit for request bodies (issue 12: no unbounded recursion on hostile input).
 * Upstream's decoders stop at 10,000 levels; this server stops at MAX_NESTING_DEPTH because
 * the JavaScript YAML encoder and decoder recurse per level and overflow the stack near
 * 5,000 levels, and a stored object must stay readable in every encoding.
 */
export const MAX_NESTING_DEPTH = 1000;

export class DepthError extends Error {
  constructor() { super(`exceeded max depth of ${MAX_NESTING_DEPTH}`); }
}

/**
 * Throws DepthError when `[`/`{` nest deeper than the limit outside strings. One pass; a
 * text shorter than the limit cannot nest that deep and is not scanned.
 */
export function checkBracketDepth(text: string): void {
  if (text.length <= MAX_NESTING_DEPTH) return;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // skip a string; escaped quotes end only after an even run of backslashes
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > MAX_NESTING_DEPTH) throw new DepthError();
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
}

export class CycleError extends Error {
  constructor() { super('recursive alias: the document contains itself'); }
}
