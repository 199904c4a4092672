/**
 * A scanner over one JSON text for text-encoder.ts: members of objects, elements of arrays, and
 * values as spans (start and length packed in one number) read later as strings, numbers,
 * booleans or raw text. Strings are found with indexOf; the next backslash is tracked once for
 * the whole text, so escapes cost only where they are. Anything unexpected (whitespace, a token
 * of the wrong kind, a text over 64 MiB) throws wire-writer's FALLBACK.
 *
 * Not reentrant: one text at a time per thread (`begin`).
 */
import * as w from './wire-writer.js';

const { FALLBACK } = w;

const SPAN = 2 ** 26;
let src = '';
let p = 0;
/** position of the next backslash at or after the last string scanned (src.length + 1: none) */
let bs = -1;
/** whether the last string scanned had escapes */
let escaped = false;

const fail = (): never => {
  throw FALLBACK;
};

export function begin(text: string): void {
  if (text.length >= SPAN) fail();
  src = text;
  p = 0;
  bs = -1;
}

export function atEnd(): boolean {
  return p === src.length;
}

/** From the opening quote at s: the index after the closing quote (sets `escaped`). */
function scanString(s: number): number {
  let q = src.indexOf('"', s + 1);
  if (q < 0) fail();
  if (bs < s) {
    bs = src.indexOf('\\', s);
    if (bs < 0) bs = src.length + 1;
  }
  escaped = bs < q;
  while (bs < q) {
    // an escape pair at bs; when its second char is the quote at q, the string goes on
    const after = bs + 2;
    if (after - 1 === q) {
      q = src.indexOf('"', after);
      if (q < 0) fail();
    }
    bs = src.indexOf('\\', after);
    if (bs < 0) bs = src.length + 1;
  }
  return q + 1;
}

/** Skips the value at p. */
function skipValue(): void {
  const c = src.charCodeAt(p);
  if (c === 0x22) p = scanString(p);
  else if (c === 0x7b) {
    p++;
    if (src.charCodeAt(p) === 0x7d) {
      p++;
      return;
    }
    for (;;) {
      if (src.charCodeAt(p) !== 0x22) fail();
      p = scanString(p);
      if (src.charCodeAt(p++) !== 0x3a) fail();
      skipValue();
      const d = src.charCodeAt(p++);
      if (d === 0x7d) return;
      if (d !== 0x2c) fail();
    }
  } else if (c === 0x5b) {
    p++;
    if (src.charCodeAt(p) === 0x5d) {
      p++;
      return;
    }
    for (;;) {
      skipValue();
      const d = src.charCodeAt(p++);
      if (d === 0x5d) return;
      if (d !== 0x2c) fail();
    }
  } else if (c === 0x74 || c === 0x6e)
    p += 4; // true, null (checked where read)
  else if (c === 0x66)
    p += 5; // false
  else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    p++;
    for (
      let d = src.charCodeAt(p);
      (d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d;
      d = src.charCodeAt(++p)
    );
  } else fail();
}

/** The value at p as a span; the scanner moves past it. */
export function readSpan(): number {
  const start = p;
  skipValue();
  return start * SPAN + (p - start);
}

/** Whether the value at p is null (then skipped). */
export function skipNull(): boolean {
  if (src.charCodeAt(p) !== 0x6e) return false;
  if (!src.startsWith('null', p)) fail();
  p += 4;
  return true;
}

function readKey(): string {
  const s = p;
  if (src.charCodeAt(s) !== 0x22) fail();
  p = scanString(s);
  const key = escaped ? (JSON.parse(src.slice(s, p)) as string) : src.slice(s + 1, p - 1);
  if (src.charCodeAt(p++) !== 0x3a) fail();
  return key;
}

/**
 * Known keys by length and first char, so a key is found in the text with no string made for
 * it (a key is matched with startsWith; only one with escapes is decoded).
 */
export class KeyIndex {
  private readonly byShape = new Map<number, { key: string; slot: number }[]>();
  private readonly all = new Map<string, number>();

  add(key: string, slot: number): void {
    this.all.set(key, slot);
    const shape = key.length * 65536 + (key.charCodeAt(0) || 0);
    const list = this.byShape.get(shape) ?? [];
    list.push({ key, slot });
    this.byShape.set(shape, list);
  }

  /** The slot of the key token at p (the scanner moves past it and its colon); -1 when unknown. */
  read(): number {
    const s = p;
    if (src.charCodeAt(s) !== 0x22) fail();
    p = scanString(s);
    if (src.charCodeAt(p++) !== 0x3a) fail();
    if (escaped) return this.all.get(JSON.parse(src.slice(s, p - 1)) as string) ?? -1;
    const len = p - s - 3;
    const list = this.byShape.get(len * 65536 + (len ? src.charCodeAt(s + 1) : 0));
    if (list) for (const k of list) if (src.startsWith(k.key, s + 1)) return k.slot;
    return -1;
  }
}

/** The members of the object at p: `member(slot)` reads the value of a known key (unknown ones are skipped). */
export function readMembers(keys: KeyIndex, member: (slot: number) => void): void {
  if (src.charCodeAt(p++) !== 0x7b) fail();
  if (src.charCodeAt(p) === 0x7d) {
    p++;
    return;
  }
  for (;;) {
    const slot = keys.read();
    if (slot < 0) skipValue();
    else member(slot);
    const d = src.charCodeAt(p++);
    if (d === 0x7d) return;
    if (d !== 0x2c) fail();
  }
}

/** The elements of the array at p, each read by `read` (a null one too: what it means is the element type's). */
export function readElements(read: () => unknown): unknown[] {
  const out: unknown[] = [];
  if (src.charCodeAt(p++) !== 0x5b) fail();
  if (src.charCodeAt(p) === 0x5d) {
    p++;
    return out;
  }
  for (;;) {
    out.push(read());
    const d = src.charCodeAt(p++);
    if (d === 0x5d) return out;
    if (d !== 0x2c) fail();
  }
}

/** The entries of the object at p as key, value, key, value…; null values are left out (as convert.ts does). */
export function readEntries(read: () => unknown): unknown[] {
  const out: unknown[] = [];
  if (src.charCodeAt(p++) !== 0x7b) fail();
  if (src.charCodeAt(p) === 0x7d) {
    p++;
    return out;
  }
  for (;;) {
    const key = readKey();
    if (!skipNull()) out.push(key, read());
    const d = src.charCodeAt(p++);
    if (d === 0x7d) return out;
    if (d !== 0x2c) fail();
  }
}

const startOf = (span: number): number => Math.floor(span / SPAN);
const endOf = (span: number): number => startOf(span) + (span % SPAN);

export function isString(span: number): boolean {
  return src.charCodeAt(startOf(span)) === 0x22;
}

/** A string token's content written as a string field's value (length and bytes). */
export function writeString(span: number): void {
  w.jsonString(src, startOf(span) + 1, endOf(span) - 1);
}

/** A string token's value; not a string: FALLBACK. */
export function stringAt(span: number): string {
  const s = startOf(span);
  const e = endOf(span);
  if (src.charCodeAt(s) !== 0x22) fail();
  const raw = src.slice(s + 1, e - 1);
  return raw.includes('\\') ? (JSON.parse(src.slice(s, e)) as string) : raw;
}

/** A number token's value; not a number: FALLBACK. */
export function numberAt(span: number): number {
  const s = startOf(span);
  const c = src.charCodeAt(s);
  if (c !== 0x2d && !(c >= 0x30 && c <= 0x39)) fail();
  return Number(src.slice(s, endOf(span)));
}

/** A boolean token's value; not a boolean: FALLBACK. */
export function boolAt(span: number): boolean {
  const s = startOf(span);
  if (src.startsWith('true', s) && span % SPAN === 4) return true;
  if (src.startsWith('false', s) && span % SPAN === 5) return false;
  return fail();
}

/** A value's JSON text. */
export function textOf(span: number): string {
  return src.slice(startOf(span), endOf(span));
}
