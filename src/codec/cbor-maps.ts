/**
 * The map keys of a CBOR data item, checked as upstream's decoder checks them (k8s.io/apimachinery
 * serializer/cbor, decode mode DupMapKeyEnforcedAPF into map[string]interface{}): a key repeated
 * in one map is refused outright, whatever the field validation (`cbor: found duplicate map key
 * "<key>" at map element index <i>`), and so is a key that is not a string (an integer `1` is not
 * the text `"1"`: `cbor: cannot unmarshal positive integer into Go value of type string`). A byte
 * string key is a string (ByteStringToStringAllowed), so it collides with the same text key.
 *
 * cbor-x decodes maps into objects, where `1` and `"1"` become one key, a repeat silently keeps
 * the last value, and a `__proto__` key is renamed `__proto_`; the scan runs over the bytes, so
 * it sees what the objects hide. It is linear in the item and iterative (no recursion, whatever
 * the nesting). Items that are not well-formed are left to the decoder's own errors.
 */
import { setOwn } from '../api/own-keys.js';

export class CborMapKeyError extends Error {}

/** What the decode of the item must do beyond cbor-x's default. */
export interface MapKeyScan {
  /** a key cbor-x would not keep as is (`__proto__`, a byte string): decode maps as Maps and convert with plainObjects */
  needsMaps: boolean;
}

/** A container being scanned: its items left (-1: indefinite length), and for a map the keys seen. */
interface Frame {
  left: number;
  keys?: Set<string>;
  index: number;
  key: boolean;
}

const utf8 = new TextDecoder();
const TYPE_NAMES = [
  'positive integer',
  'negative integer',
  'byte string',
  'UTF-8 text string',
  'array',
  'map',
  'tag',
  'primitives',
];

/** Scans the single data item at the start of bytes; throws CborMapKeyError for a key upstream refuses. */
export function scanMapKeys(bytes: Uint8Array): MapKeyScan {
  const r = { at: 0 };
  // the root frame holds the one item (tags before it included)
  const stack: Frame[] = [{ left: 1, index: 0, key: false }];
  const scan: MapKeyScan = { needsMaps: false };
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top && top.left === 0) {
      stack.pop();
      itemDone(stack);
      continue;
    }
    if (r.at >= bytes.length) return scan; // truncated: the decoder says so
    const head = bytes[r.at]!;
    if (head === 0xff) {
      r.at++;
      if (top && top.left === -1) {
        stack.pop();
        itemDone(stack);
      }
      continue;
    }
    const major = head >> 5;
    if (top?.key && major !== 3 && major !== 2)
      throw new CborMapKeyError(`cbor: cannot unmarshal ${TYPE_NAMES[major]} into Go value of type string`);
    if (top?.key) {
      noteKey(top, readString(bytes, r), major === 2, scan);
      top.key = false;
      continue;
    }
    const n = readHead(bytes, r);
    if (major === 2 || major === 3) {
      skipString(bytes, r, n);
      itemDone(stack);
    } else if (major === 4) stack.push({ left: n, index: 0, key: false });
    else if (major === 5) stack.push({ left: n < 0 ? -1 : n * 2, keys: new Set(), index: 0, key: true });
    else if (major !== 6) itemDone(stack); // a tag's content is the next item; scalars are done
  }
  return scan;
}

function noteKey(map: Frame, key: string, bytesKey: boolean, scan: MapKeyScan): void {
  if (map.keys!.has(key))
    throw new CborMapKeyError(`cbor: found duplicate map key ${JSON.stringify(key)} at map element index ${map.index}`);
  map.keys!.add(key);
  if (bytesKey || key === '__proto__') scan.needsMaps = true;
  if (map.left > 0) map.left--;
}

/** One item of the innermost container is complete: a map alternates key and value. */
function itemDone(stack: Frame[]): void {
  const top = stack[stack.length - 1];
  if (!top) return;
  if (top.left > 0) top.left--;
  if (top.keys) {
    top.key = true;
    top.index++;
  }
}

/** The argument of an item's head (-1 for indefinite length); r.at moves past the head. */
function readHead(bytes: Uint8Array, r: { at: number }): number {
  const ai = bytes[r.at++]! & 0x1f;
  if (ai < 24) return ai;
  if (ai === 31) return -1;
  const size = ai === 24 ? 1 : ai === 25 ? 2 : ai === 26 ? 4 : ai === 27 ? 8 : 0;
  let n = 0;
  for (let i = 0; i < size; i++) n = n * 256 + (bytes[r.at++] ?? 0);
  return n;
}

/** Moves past a string's content (definite, or indefinite chunks up to the break). */
function skipString(bytes: Uint8Array, r: { at: number }, n: number): void {
  if (n >= 0) {
    r.at += n;
    return;
  }
  while (r.at < bytes.length && bytes[r.at] !== 0xff) r.at += Math.max(0, readHead(bytes, r));
  r.at++;
}

/** UTF-8 bytes as a string: short ASCII keys (nearly all) without a decoder call. */
function text(bytes: Uint8Array, at: number, n: number): string {
  if (n <= 32) {
    let s = '';
    for (let i = at; i < at + n; i++) {
      const c = bytes[i]!;
      if (c >= 0x80) return utf8.decode(bytes.subarray(at, at + n));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8.decode(bytes.subarray(at, at + n));
}

/** A text or byte string key's value. */
function readString(bytes: Uint8Array, r: { at: number }): string {
  const n = readHead(bytes, r);
  if (n >= 0) {
    const s = text(bytes, r.at, n);
    r.at += n;
    return s;
  }
  let s = '';
  while (r.at < bytes.length && bytes[r.at] !== 0xff) {
    const len = Math.max(0, readHead(bytes, r));
    s += text(bytes, r.at, len);
    r.at += len;
  }
  r.at++;
  return s;
}

/**
 * cbor-x's Maps (decoded with mapsAsObjects off) as plain objects whose keys are all own keys
 * (`__proto__` included); byte string keys become their UTF-8 text. Iterative.
 */
export function plainObjects(root: unknown): unknown {
  const convert = (v: unknown): unknown =>
    v instanceof Map ? {} : Array.isArray(v) ? new Array<unknown>(v.length) : v;
  const out = convert(root);
  const stack: [unknown, unknown][] = out === root ? [] : [[root, out]];
  while (stack.length) {
    const [src, dst] = stack.pop()!;
    const put = (k: string | number, x: unknown) => {
      const y = convert(x);
      if (typeof k === 'number') (dst as unknown[])[k] = y;
      else setOwn(dst as object, k, y);
      if (y !== x) stack.push([x, y]);
    };
    if (src instanceof Map) for (const [k, x] of src) put(k instanceof Uint8Array ? utf8.decode(k) : String(k), x);
    else (src as unknown[]).forEach((x, i) => put(i, x));
  }
  return out;
}
