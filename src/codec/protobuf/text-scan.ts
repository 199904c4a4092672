/**
 * The read half of text-encoder.ts: one pass over a JSON text's UTF-8 bytes that records, per JSON
 * object, the values of its message's known keys on a tape (an Int32Array reused for every text,
 * no object or string made per value): a scalar as the [start, end) of its token, a sub-object as
 * the tape offset of its own record, an array or a map as a linked list of tape nodes. A key is
 * first compared with the one that followed the previous key the last time an object of the type
 * was read (objects of a kind repeat their key order), then looked up. The bytes are the text's
 * UTF-8 (a text with a lone surrogate is refused), so a string token without escapes holds its
 * value's UTF-8 as protobuf writes it, and raw JSON is its own bytes. Anything unexpected
 * (whitespace, a token of the wrong kind, a text over 64 MiB) throws wire-writer's FALLBACK.
 *
 * Tape layout: a record of plan P is 2 × P.n ints, slot i at [2i, 2i + 1], both 0 when absent.
 * Single scalar: [start + 1, end]. Single message: [record + 1, 0]. Repeated: [head node + 1,
 * tail node] ([0, -1] when empty), a node [next + 1, a, b] with (a, b) as a single value. Map:
 * [head + 1, tail], a node [next + 1, a, b, keyStart, keyEnd] with the key's bytes between its
 * quotes (null values left out).
 *
 * Not reentrant: one text at a time per thread (`begin`).
 */
import * as w from './wire-writer.js';
import { KIND_MESSAGE, MODE_MAP, MODE_SINGLE, type Plan } from './text-plan.js';

const INITIAL = 64 * 1024;
const SHRINK_ABOVE = 4 * 1024 * 1024;
/** the text's UTF-8 bytes: src[0, end) */
export let src: Buffer = Buffer.allocUnsafeSlow(INITIAL);
let end = 0;
let p = 0;
/** the records of the text being read (see the layout above) */
export let tape = new Int32Array(4096);
let tp = 0;

const fail = w.fallback;

type WellFormed = { isWellFormed?(): boolean };

/**
 * Starts reading a text. ascii: the caller knows it holds only ASCII characters (its UTF-8 length
 * equals its length: codec.ts jsonBytes), so it is well formed and its Latin-1 bytes are its UTF-8.
 */
export function begin(text: string, ascii = false): void {
  if (text.length >= 2 ** 26 || (!ascii && (text as WellFormed).isWellFormed?.() === false)) fail();
  if (text.length * 3 >= src.length) src = Buffer.allocUnsafeSlow(Math.max(src.length * 2, text.length * 3 + 1));
  else if (src.length > SHRINK_ABOVE && text.length * 3 < INITIAL) src = Buffer.allocUnsafeSlow(INITIAL); // after a huge text
  end = ascii ? src.write(text, 0, text.length, 'latin1') : src.write(text, 0, 'utf8');
  src[end] = 0; // a sentinel no token or delimiter check accepts
  p = 0;
  tp = 0;
}

/** As begin, for a text already written as UTF-8 (a well-formed one: encode-helper.ts ships only those). */
export function beginBytes(bytes: Uint8Array): void {
  const n = bytes.byteLength;
  if (n >= 2 ** 26) fail();
  if (n >= src.length) src = Buffer.allocUnsafeSlow(Math.max(src.length * 2, n + 1));
  else if (src.length > SHRINK_ABOVE && n < INITIAL) src = Buffer.allocUnsafeSlow(INITIAL);
  src.set(bytes);
  end = n;
  src[end] = 0;
  p = 0;
  tp = 0;
}

export function atEnd(): boolean {
  return p === end;
}

/** n ints of the tape, zeroed; answers their offset. */
function alloc(n: number): number {
  const at = tp;
  tp += n;
  if (tp > tape.length) {
    const next = new Int32Array(Math.max(tape.length * 2, tp));
    next.set(tape.subarray(0, at));
    tape = next;
  }
  const t = tape;
  if (n > 32) t.fill(0, at, tp);
  else for (let i = at; i < tp; i++) t[i] = 0;
  return at;
}

/** From the opening quote at s: the index after the closing quote. */
function scanString(s: number): number {
  const b = src;
  const e = end;
  for (let i = s + 1; i < e; i++) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c === 0x5c) i++;
  }
  return fail();
}

/**
 * Skips the object or array at p in one loop over its bytes (raw JSON such as managed fields'
 * FieldsV1 is copied as it is, so only its end is needed): nesting counted, strings stepped over,
 * whitespace refused (not JSON.stringify's output: the object path re-stringifies it).
 */
function skipComposite(): void {
  const b = src;
  const e = end;
  let depth = 0;
  for (let i = p; i < e; i++) {
    const c = b[i]!;
    if (c === 0x22) {
      for (i++; i < e; i++) {
        const d = b[i]!;
        if (d === 0x22) break;
        if (d === 0x5c) i++;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) {
        p = i + 1;
        return;
      }
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
  }
  fail();
}

/** Skips the value at p. */
function skipValue(): void {
  const c = src[p]!;
  if (c === 0x22) p = scanString(p);
  else if (c === 0x7b || c === 0x5b) skipComposite();
  else if (c === 0x74 || c === 0x6e)
    p += 4; // true, null (checked where read)
  else if (c === 0x66)
    p += 5; // false
  else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    p++;
    for (
      let d = src[p]!;
      (d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d;
      d = src[++p]!
    );
  } else fail();
  if (p > end) fail();
}

/** Whether the value at p is null (then skipped). */
function skipNull(): boolean {
  if (src[p] !== 0x6e) return false;
  if (src[p + 1] !== 0x75 || src[p + 2] !== 0x6c || src[p + 3] !== 0x6c || p + 4 > end) fail();
  p += 4;
  return true;
}

/** The slot of the key token at p, -1 when unknown; the scanner moves past it and its colon. */
function readKey(plan: Plan, prev: number): number {
  const s = p + 1;
  const g = plan.next[prev]!;
  const b = src;
  if (g >= 0) {
    // the key that followed prev last time (ASCII, no char JSON escapes): an equal run of bytes
    // followed by a quote is the whole key
    const n = plan.keys[g]!.length;
    if (b[s + n] === 0x22 && b[s + n + 1] === 0x3a) {
      const k = plan.keyBytes;
      const at = plan.keyAt[g]!;
      let i = 0;
      while (i < n && b[s + i] === k[at + i]) i++;
      if (i === n) {
        p = s + n + 2;
        return g;
      }
    }
  }
  if (b[p] !== 0x22) fail();
  p = scanString(p);
  if (b[p++] !== 0x3a) fail();
  const n = p - 2 - s;
  for (let i = s; i < s + n; i++) if (b[i]! >= 0x80 || b[i] === 0x5c) return plan.all.get(stringOf(s - 1, p - 1)) ?? -1;
  // ASCII without escapes: equal only to a plain key of the same bytes (no string made for it)
  const list = plan.byShape.get(n * 65536 + (n ? b[s]! : 0));
  if (list) for (const slot of list) if (plan.plain[slot] && sameBytes(plan, slot, s, n)) return slot;
  return -1;
}

function sameBytes(plan: Plan, slot: number, s: number, n: number): boolean {
  const k = plan.keyBytes;
  const at = plan.keyAt[slot]!;
  for (let i = 0; i < n; i++) if (src[s + i] !== k[at + i]) return false;
  return true;
}

/** The value of the string token src[s, e). */
export function stringOf(s: number, e: number): string {
  const text = src.toString('utf8', s, e);
  return text.includes('\\') ? (JSON.parse(text) as string) : text.slice(1, -1);
}

/** Reads the JSON object at p into a new record of plan's slots; answers its tape offset. */
export function readRecord(plan: Plan): number {
  if (src[p++] !== 0x7b) fail();
  const rec = alloc(plan.n * 2);
  if (src[p] === 0x7d) {
    p++;
    return rec;
  }
  let prev = plan.n;
  for (;;) {
    const slot = readKey(plan, prev);
    if (slot < 0) skipValue();
    else {
      if (plan.plain[slot]) {
        plan.next[prev] = slot;
        prev = slot;
      }
      const at = rec + 2 * slot;
      if (skipNull()) tape[at] = tape[at + 1] = 0;
      else if (plan.modes[slot] === MODE_SINGLE) readValue(plan, slot, at);
      else readList(plan, slot, at);
    }
    const d = src[p++];
    if (d === 0x7d) return rec;
    if (d !== 0x2c) fail();
  }
}

/** A single value of slot's kind into tape[at], tape[at + 1]. */
function readValue(plan: Plan, slot: number, at: number): void {
  if (plan.kinds[slot] === KIND_MESSAGE) {
    tape[at] = readRecord(plan.subs[slot]!) + 1;
    tape[at + 1] = 0;
  } else {
    if (plan.kinds[slot] === 0) fail();
    const start = p;
    skipValue();
    tape[at] = start + 1;
    tape[at + 1] = p;
  }
}

/** The elements of an array, or the non-null members of a map, as nodes linked from tape[at]. */
function readList(plan: Plan, slot: number, at: number): void {
  const map = plan.modes[slot] === MODE_MAP;
  const open = map ? 0x7b : 0x5b;
  const close = open + 2;
  if (src[p++] !== open) fail();
  // present, so far empty: [0, -1] (an embedded struct holding only an empty list is written)
  tape[at] = 0;
  tape[at + 1] = -1;
  if (src[p] === close) {
    p++;
    return;
  }
  for (;;) {
    let keyStart = 0;
    let keyEnd = 0;
    let member = true;
    if (map) {
      if (src[p] !== 0x22) fail();
      keyStart = p + 1;
      p = scanString(p);
      keyEnd = p - 1;
      if (src[p++] !== 0x3a) fail();
      member = !skipNull(); // a map's null values are left out (as convert.ts does)
    }
    if (member) {
      const node = alloc(map ? 5 : 3);
      readValue(plan, slot, node + 1);
      if (map) {
        tape[node + 3] = keyStart;
        tape[node + 4] = keyEnd;
      }
      if (tape[at] === 0) tape[at] = node + 1;
      else tape[tape[at + 1]!] = node + 1;
      tape[at + 1] = node;
    }
    const d = src[p++];
    if (d === close) return;
    if (d !== 0x2c) fail();
  }
}
