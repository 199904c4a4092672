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

let young = new Map<object, string>();
let old = new Map<object, string>();

function remember(node: object, text: string): void {
  if (young.size >= GENERATION) {
    old = young;
    young = new Map();
  }
  young.set(node, text);
}

function remembered(node: object): string | undefined {
  const text = young.get(node);
  if (text !== undefined) return text;
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

/** `"name":` per member name (the few names of the written levels), bounded */
const keyTexts = new Map<string, string>();
const MAX_KEYS = 1024;

function keyText(k: string): string {
  let t = keyTexts.get(k);
  if (t === undefined) {
    if (keyTexts.size >= MAX_KEYS) keyTexts.clear();
    keyTexts.set(k, (t = JSON.stringify(k) + ':'));
  }
  return t;
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

/**
 * A member's text (undefined when JSON.stringify leaves it out); `prev`: the same member of the
 * replaced version.
 */
function valueText(v: unknown, prev: unknown, depth: number, inManagedFields: boolean): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (!isPlain(v)) return JSON.stringify(v);
  if (descend(depth, inManagedFields)) return nodeText(v, prev, depth, inManagedFields);
  if (v === prev) {
    const text = remembered(v);
    if (text !== undefined) return text;
  }
  const text = JSON.stringify(v);
  if (text.length >= MIN_TEXT) remember(v, text);
  return text;
}

function nodeText(v: Node, prev: unknown, depth: number, inManagedFields: boolean): string {
  const p = prev !== null && typeof prev === 'object' ? (prev as Record<string, unknown>) : undefined;
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
  for (const k of Object.keys(v)) {
    const text = valueText(v[k], p?.[k], depth + 1, inManagedFields || (depth === 1 && k === 'managedFields'));
    if (text === undefined) continue;
    out += (first ? '' : ',') + keyText(k) + text;
    first = false;
  }
  return out + '}';
}

/** JSON.stringify(obj), reusing the texts of subtrees obj shares with `prev` (the version it replaces). */
export function stringifySharing(obj: unknown, prev: unknown): string {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj) || !isPlain(obj)) return stringifyValue(obj);
  try {
    return nodeText(obj, prev, 0, false);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return stringifyValue(obj);
  }
}
