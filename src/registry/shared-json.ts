/**
 * The JSON text of an updated object, reusing the text of the subtrees it shares by reference
 * with the version it replaces. Every write copies what it changes (patch.ts patchBase), so an
 * update shares most of its subtrees with the stored object: an apply's managedFields trees
 * (render() in src/apply/managed-fields.ts hands out the same tree while a manager's set stays
 * the same), a rescale's pod template. Their text was taken when the version that brought them
 * was written; a text is used again only for a node that is also the same member of the
 * replaced version (`prev`), which is a cached object and never changes (the cache contract,
 * checked by PLAT_FREEZE_STORED in the tests), so the text is still the node's.
 *
 * The text is JSON.stringify's, byte for byte: the top two levels (and managedFields down to
 * each entry's fieldsV1) are written member by member in the same order (Object.keys order is
 * JSON.stringify's), leaving out what it leaves out (undefined, functions, symbols; null for
 * them in arrays); every other value is JSON.stringify's own text. Anything but plain objects
 * and arrays at the written levels (a toJSON, say) takes JSON.stringify whole, as does an object
 * that nests past the native stack (stringifyValue's iterative fallback).
 *
 * Bounded: texts of at least MIN_TEXT characters, at most 2 × GENERATION of them per thread
 * (two generations: a hit moves a text to the young one, the old one is dropped when the young
 * one fills), so objects written again soon keep theirs.
 */
import { stringifyValue } from '../schema/deep-value.js';

const MIN_TEXT = 96;
const GENERATION = 2048;

/** A text and how many `{` and `[` it holds (anywhere, strings included). */
export interface Piece {
  text: string;
  openers: number;
}

let young = new Map<object, Piece>();
let old = new Map<object, Piece>();

function remember(node: object, piece: Piece): void {
  if (young.size >= GENERATION) {
    old = young;
    young = new Map();
  }
  young.set(node, piece);
}

function remembered(node: object): Piece | undefined {
  const piece = young.get(node);
  if (piece !== undefined) return piece;
  const aged = old.get(node);
  if (aged !== undefined) remember(node, aged);
  return aged;
}

/** How many texts are remembered (tests). */
export function rememberedTexts(): number {
  return young.size + old.size;
}

/** Forgets every text (tests). */
export function forgetTexts(): void {
  young = new Map();
  old = new Map();
}

/** How many times ch occurs in text. */
function occurrences(text: string, ch: string): number {
  let n = 0;
  for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

const openersIn = (text: string): number => occurrences(text, '{') + occurrences(text, '[');

/** `"name":` and `,"name":` per member name (the few names of the written levels), bounded */
interface KeyPiece extends Piece {
  /** the text after a previous member: `,` and text (one concatenation per member instead of two) */
  next: string;
}
const keyTexts = new Map<string, KeyPiece>();
const MAX_KEYS = 1024;

function keyPiece(k: string): KeyPiece {
  let piece = keyTexts.get(k);
  if (piece === undefined) {
    if (keyTexts.size >= MAX_KEYS) keyTexts.clear();
    const text = JSON.stringify(k) + ':';
    keyTexts.set(k, (piece = { text, next: `,${text}`, openers: openersIn(text) }));
  }
  return piece;
}

type Node = Record<string, unknown> | unknown[];

function isPlain(v: object): v is Node {
  if (Array.isArray(v)) return true;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Descend into this member of `parent` (at `depth`, the object itself is 0) instead of taking its text whole. */
function descend(depth: number, inManagedFields: boolean): boolean {
  return depth < 2 || (inManagedFields && depth < 4);
}

/** the `{` and `[` written so far by the running call (the texts are built in one pass) */
let openers = 0;

/** JSON.stringify(v), its openers counted */
function fresh(v: unknown): string | undefined {
  const text = JSON.stringify(v);
  if (text !== undefined) openers += openersIn(text);
  return text;
}

/**
 * A member's text (undefined when JSON.stringify leaves it out); `prev`: the same member of the
 * replaced version.
 */
function valueText(v: unknown, prev: unknown, depth: number, inManagedFields: boolean): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null || typeof v !== 'object' || !isPlain(v)) return fresh(v);
  if (descend(depth, inManagedFields)) return nodeText(v, prev, depth, inManagedFields);
  if (v === prev) {
    const piece = remembered(v);
    if (piece !== undefined) {
      openers += piece.openers;
      return piece.text;
    }
  }
  const text = JSON.stringify(v);
  const n = openersIn(text);
  openers += n;
  if (text.length >= MIN_TEXT) remember(v, { text, openers: n });
  return text;
}

function nodeText(v: Node, prev: unknown, depth: number, inManagedFields: boolean): string {
  const p = prev !== null && typeof prev === 'object' ? (prev as Record<string, unknown>) : undefined;
  openers++;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i) out += ',';
      out += valueText(v[i], p?.[i], depth + 1, inManagedFields) ?? 'null';
    }
    return out + ']';
  }
  let out = '{';
  let first = true;
  // for-in over own keys: JSON.stringify's order (Object.keys'), without the array of keys
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const text = valueText(v[k], p?.[k], depth + 1, inManagedFields || (depth === 1 && k === 'managedFields'));
    if (text === undefined) continue;
    const key = keyPiece(k);
    openers += key.openers;
    out += (first ? key.text : key.next) + text;
    first = false;
  }
  return out + '}';
}

/**
 * JSON.stringify(obj), reusing the texts of subtrees obj shares with `prev` (the version it
 * replaces), and the number of `{` and `[` characters in it (an object nests no deeper than
 * that: checkStorable need not scan the text when it is within the limit).
 */
export function encodeSharing(obj: unknown, prev: unknown): Piece {
  // not counted on these rare ways (Infinity: scan the text as before)
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj) || !isPlain(obj))
    return { text: stringifyValue(obj), openers: Number.POSITIVE_INFINITY };
  openers = 0;
  try {
    return { text: nodeText(obj, prev, 0, false), openers };
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return { text: stringifyValue(obj), openers: Number.POSITIVE_INFINITY };
  }
}

/** encodeSharing's text. */
export function stringifySharing(obj: unknown, prev: unknown): string {
  return encodeSharing(obj, prev).text;
}
