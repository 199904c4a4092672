/**
 * Duplicate keys in request bodies. JSON.parse and the YAML parser keep the last value of a
 * repeated key (as upstream's decoders do); these helpers parse the same way and also note
 * every repeated key, so field validation can drop (Ignore), warn about (Warn) or reject
 * (Strict) them. The JSON scan runs only when a cheap count says the text may hold a repeat.
 */
import { parseDocument, isMap, isScalar, isSeq, type Node } from 'yaml';
import { checkAcyclic, checkBracketDepth, checkNodeDepth, CycleError, DepthError } from './depth.js';

/** One repeated key: its path (`spec.template.spec.containers[0].name`), the key, and its 1-based line. */
export interface Duplicate { path: string; key: string; line: number }

const YAML_OPTIONS = { maxAliasCount: 100 } as const;

/** JSON.parse, noting repeated keys in `found` when given. Throws JSON.parse's SyntaxError. */
export function parseJsonNoting(text: string, found?: Duplicate[]): any {
  checkBracketDepth(text);
  const value = JSON.parse(text);
  if (found && mayRepeatKeys(text, value)) for (const d of jsonDuplicates(text)) found.push(d);
  return value;
}

/**
 * YAML (JSON included) as upstream decodes it: repeated keys keep the last value and are noted
 * in `found`. JSON text takes JSON.parse, far cheaper than the YAML parser and the same value.
 */
export function parseYamlNoting(text: string, found?: Duplicate[]): any {
  if (text[text.search(/\S/)] === '{') {
    try {
      return parseJsonNoting(text, found);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
  }
  checkBracketDepth(text);
  let doc;
  try {
    doc = parseDocument(text, { ...YAML_OPTIONS, uniqueKeys: true });
  } catch (e) {
    // block nesting deep enough to overflow the parser's recursion
    if (e instanceof RangeError) throw new DepthError();
    throw e;
  }
  const fatal = doc.errors.find((e) => e.code !== 'DUPLICATE_KEY');
  if (fatal) throw fatal;
  const aliases = checkNodeDepth(doc.contents);
  if (found && doc.errors.length) for (const d of yamlDuplicates(doc.contents, text)) found.push(d);
  let value: unknown;
  try {
    value = doc.toJS(YAML_OPTIONS);
  } catch (e) {
    if (e instanceof RangeError) throw new CycleError();
    throw e;
  }
  if (aliases) checkAcyclic(value);
  return value;
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

interface Frame { keys: Set<string> | undefined; key: string; index: number }

const lineAt = (text: string, offset: number): number => {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
};

function pathOf(frames: Frame[], key: string): string {
  let path = '';
  for (let d = 0; d < frames.length - 1; d++) {
    const f = frames[d]!;
    path += f.keys ? (path ? `.${f.key}` : f.key) : `[${f.index}]`;
  }
  return path ? `${path}.${key}` : key;
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
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(text, i);
      const top = frames[frames.length - 1];
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end);
        const key: string = raw.includes('\\') ? JSON.parse(text.slice(i, end + 1)) : raw;
        if (top.keys.has(key)) out.push({ path: pathOf(frames, key), key, line: lineAt(text, i) });
        else top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 123) {
      frames.push({ keys: new Set(), key: '', index: 0 });
      expectKey = true;
    } else if (c === 91) {
      frames.push({ keys: undefined, key: '', index: 0 });
    } else if (c === 125 || c === 93) {
      frames.pop();
    } else if (c === 44) {
      const top = frames[frames.length - 1]!;
      if (top.keys) expectKey = true; else top.index++;
    }
  }
  return out;
}

/** Repeated keys of a parsed YAML document (run only when the parser reported some). */
function yamlDuplicates(root: Node | null, text: string): Duplicate[] {
  const out: Duplicate[] = [];
  const visit = (node: unknown, path: string): void => {
    if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item, `${path}[${i}]`));
    } else if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = isScalar(pair.key) ? pair.key.value : pair.key;
        const key = typeof k === 'string' ? k : JSON.stringify(k);
        const at = path ? `${path}.${key}` : key;
        if (seen.has(key)) {
          const offset = (pair.key as Node | null)?.range?.[0] ?? 0;
          out.push({ path: at, key, line: lineAt(text, offset) });
        }
        seen.add(key);
        visit(pair.value, at);
      }
    }
  };
  visit(root, '');
  return out;
}
