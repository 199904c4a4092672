/**
 * Duplicate keys in request bodies. JSON.parse and the YAML parser keep the last value of a
 * repeated key (as upstream's decoders do); these helpers parse the same way and also note
 * every repeated key, so field validation can drop (Ignore), warn about (Warn) or reject
 * (Strict) them. The JSON scan runs only when a cheap count says the text may hold a repeat.
 */
import { LineCounter, parseDocument } from 'yaml';
import { checkBracketDepth, DepthError } from '../schema/depth.js';
import { yamlValue, type Duplicate } from '../schema/yaml-value.js';

export type { Duplicate };

/** JSON.parse, noting repeated keys in `found` when given. Throws JSON.parse's SyntaxError. */
export function parseJsonNoting(text: string, found?: Duplicate[]): unknown {
  checkBracketDepth(text);
  const value: unknown = JSON.parse(text);
  if (found && mayRepeatKeys(text, value)) for (const d of jsonDuplicates(text)) found.push(d);
  return value;
}

/**
 * YAML (JSON included) as upstream decodes it: repeated keys keep the last value and are noted
 * in `found`. JSON text takes JSON.parse, far cheaper than the YAML parser and the same value.
 * Linear in the text: the parser's own repeated-key check (`uniqueKeys`) compares each key with
 * every other key of its mapping, so it stays off and yamlValue notes repeats with a Set.
 */
export function parseYamlNoting(text: string, found?: Duplicate[]): unknown {
  // a body starting with its brace (what clients send) needs no regular expression to tell
  if (text.charCodeAt(0) === 123 || text[text.search(/\S/)] === '{') {
    try {
      return parseJsonNoting(text, found);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
  }
  checkBracketDepth(text);
  const lines = found ? new LineCounter() : undefined;
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { uniqueKeys: false, merge: false, lineCounter: lines });
  } catch (e) {
    // block nesting deep enough to overflow the parser's recursion
    if (e instanceof RangeError) throw new DepthError();
    throw e;
  }
  if (doc.errors.length) throw doc.errors[0];
  return yamlValue(doc, found, lines);
}

/** Counts keys of a parsed value (objects at any depth). */
function keyCount(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (const x of v) n += keyCount(x);
    return n;
  }
  for (const k in v) n += 1 + keyCount((v as Record<string, unknown>)[k]);
  return n;
}

/**
 * Every key of a JSON text is a string followed (after optional whitespace) by a colon, so
 * the colons right after a quote are at least as many as the keys in the text; when they are
 * no more than the keys JSON.parse kept, no key repeats. A colon after a quote inside a string
 * only makes the scan run for nothing; the count never misses a repeat.
 */
function mayRepeatKeys(text: string, value: unknown): boolean {
  let colons = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    let c = text.charCodeAt(j);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(--j);
    if (c === 34) colons++;
  }
  return colons > keyCount(value);
}

/** An open object or array: its path (computed once, when it opens), its keys so far, its current key or index. */
interface Frame {
  path: string;
  keys: Set<string> | undefined;
  key: string;
  index: number;
}

/** The path of a frame that opens inside `parent` (at its current key or index). */
function childPath(parent: Frame | undefined): string {
  if (!parent) return '';
  if (!parent.keys) return `${parent.path}[${parent.index}]`;
  return parent.path ? `${parent.path}.${parent.key}` : parent.key;
}

/**
 * 1-based line numbers of increasing offsets, counting each newline once (a per-repeat scan
 * from the start of the text made many repeats quadratic).
 */
class Lines {
  /** the first newline not yet counted (text.length when none is left) */
  private next: number;
  private line = 1;
  constructor(private readonly text: string) {
    this.next = this.find(0);
  }
  of(offset: number): number {
    while (this.next < offset) {
      this.line++;
      this.next = this.find(this.next + 1);
    }
    return this.line;
  }
  private find(from: number): number {
    const i = this.text.indexOf('\n', from);
    return i < 0 ? this.text.length : i;
  }
}

/** The end quote of the string starting at `start` (the opening quote). */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/** Repeated keys of a well-formed JSON text, in document order (one pass, strings skipped by indexOf). */
export function jsonDuplicates(text: string): Duplicate[] {
  const out: Duplicate[] = [];
  const frames: Frame[] = [];
  const lines = new Lines(text);
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(text, i);
      const top = frames[frames.length - 1];
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end);
        const key: string = raw.includes('\\') ? JSON.parse(text.slice(i, end + 1)) : raw;
        if (top.keys.has(key)) out.push({ path: top.path ? `${top.path}.${key}` : key, key, line: lines.of(i) });
        else top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 123) {
      frames.push({ path: childPath(frames[frames.length - 1]), keys: new Set(), key: '', index: 0 });
      expectKey = true;
    } else if (c === 91) {
      frames.push({ path: childPath(frames[frames.length - 1]), keys: undefined, key: '', index: 0 });
    } else if (c === 125 || c === 93) {
      frames.pop();
    } else if (c === 44) {
      const top = frames[frames.length - 1]!;
      if (top.keys) expectKey = true;
      else top.index++;
    }
  }
  return out;
}
