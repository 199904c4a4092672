/**
 * RFC 6902 JSON patch: add, remove, replace, move, copy, test. Never mutates its input.
 * Bounded as upstream bounds it (k8s.io/apiserver patch handler, evanphx/json-patch v4): at
 * most MAX_OPERATIONS operations (413), and the bytes `copy` operations add, summed over the
 * patch, at most MAX_COPY_BYTES (422) — without it 24 copies of a 2 KB array double it to GBs.
 */
import { errors, StatusError } from '../api/status.js';
import { copyValue } from '../schema/deep-value.js';
import { ownValue, setOwn } from '../api/own-keys.js';

/** upstream maxJSONPatchOperations */
export const MAX_OPERATIONS = 10_000;
/** upstream JSONPatchMaxCopyBytes (jsonpatch.AccumulatedCopySizeLimit): 3 MiB */
export const MAX_COPY_BYTES = 3 * 1024 * 1024;
/**
 * Array elements that inserts and removals in the middle of arrays may shift, summed over the
 * patch (each costs O(length)): 10,000 moves in a 1.5M-element array would hold the shard
 * actor for many seconds. Not upstream (whose Go copies are cheaper); far above any real patch.
 */
export const MAX_SHIFTED_ELEMENTS = 50_000_000;

/** The work a patch did so far, checked against the bounds above. */
interface Work {
  shifted: number;
  copied: number;
}

function shift(work: Work, n: number): void {
  work.shifted += n;
  if (work.shifted > MAX_SHIFTED_ELEMENTS) {
    throw errors.invalidPatch(
      `the patch moves more than ${MAX_SHIFTED_ELEMENTS} array elements: split it into smaller patches`,
    );
  }
}

interface Operation {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

/** An object or array of the document: what a pointer's tokens step through. */
type Container = Record<string, unknown> | unknown[];

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw errors.invalidPatch(`invalid JSON pointer "${p}"`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The container of a pointer's last token; member names are ordinary own keys (src/api/own-keys.ts). */
function parent(doc: unknown, tokens: string[], path: string): { container: Container; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object')
      throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
    cur = Array.isArray(cur) ? cur[index(cur, t, path, false)] : ownValue(cur, t);
    if (cur === undefined) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  }
  if (cur === null || typeof cur !== 'object')
    throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  return { container: cur as Container, key: tokens[tokens.length - 1]! };
}

function index(arr: unknown[], t: string, path: string, forAdd: boolean): number {
  if (forAdd && t === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(t)) throw errors.invalidPatch(`invalid array index "${t}" in "${path}"`);
  const i = Number(t);
  if (i > arr.length || (!forAdd && i === arr.length))
    throw errors.invalidPatch(`Unable to access invalid index: ${i}`);
  return i;
}

function get(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const { container, key } = parent(doc, tokens, path);
  const v = Array.isArray(container) ? container[index(container, key, path, false)] : ownValue(container, key);
  if (v === undefined) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
  return v;
}

function add(doc: unknown, path: string, value: unknown, work: Work): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) {
    const i = index(container, key, path, true);
    shift(work, container.length - i);
    container.splice(i, 0, value);
  } else setOwn(container, key, value);
  return doc;
}

/** Sets an existing member or element in place (no elements shift). */
function replace(doc: unknown, path: string, value: unknown): unknown {
  const { container, key } = parent(doc, parsePointer(path), path);
  if (Array.isArray(container)) container[index(container, key, path, false)] = value;
  else setOwn(container, key, value);
  return doc;
}

function remove(doc: unknown, path: string, work: Work): unknown {
  const tokens = parsePointer(path);
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) {
    const i = index(container, key, path, false);
    shift(work, container.length - i - 1);
    container.splice(i, 1);
  } else {
    if (!Object.hasOwn(container, key)) throw errors.invalidPatch(`doc is missing path: "${path}": missing value`);
    delete container[key];
  }
  return doc;
}

/** Applies the operations to a copy of doc; a failed test or bad path changes nothing. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch))
    throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (patch.length > MAX_OPERATIONS) {
    throw new StatusError({
      ...errors.requestEntityTooLarge(0).status,
      message: `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${patch.length}`,
    });
  }
  // copyValue: the live object may nest deeper than structuredClone recurses (stored by an older version)
  let out: unknown = copyValue(doc);
  const work: Work = { shifted: 0, copied: 0 };
  for (const raw of patch as Operation[]) {
    if (!raw || typeof raw !== 'object' || typeof raw.path !== 'string')
      throw errors.invalidPatch('operation must have a path');
    if ((raw.op === 'add' || raw.op === 'replace' || raw.op === 'test') && !('value' in raw))
      throw errors.invalidPatch(`${raw.op} operation does not apply: doc is missing value`);
    if ((raw.op === 'move' || raw.op === 'copy') && typeof raw.from !== 'string')
      throw errors.invalidPatch(`${raw.op} operation does not apply: missing from`);
    out = step(out, raw, work);
  }
  return out;
}

/** One operation on the document (mutated in place where it can be); returns the new document. */
function step(out: unknown, raw: Operation, work: Work): unknown {
  switch (raw.op) {
    case 'add':
      return add(out, raw.path, structuredClone(raw.value), work);
    case 'remove':
      return remove(out, raw.path, work);
    case 'replace':
      get(out, raw.path);
      return raw.path === '' ? structuredClone(raw.value) : replace(out, raw.path, structuredClone(raw.value));
    case 'move': {
      const from = raw.from ?? '';
      if (raw.path.startsWith(from + '/'))
        throw errors.invalidPatch(`cannot move "${from}" into its own child "${raw.path}"`);
      const v = get(out, from);
      return add(remove(out, from, work), raw.path, v, work);
    }
    case 'copy': {
      const v = get(out, raw.from ?? '');
      // measured before the copy is made (Go: the size of the value marshalled)
      work.copied += jsonBytes(v);
      if (work.copied > MAX_COPY_BYTES) {
        throw errors.invalidPatch(
          `Unable to complete the copy, the accumulated size increase of copy is ${work.copied}, exceeding the limit ${MAX_COPY_BYTES}`,
        );
      }
      return add(out, raw.path, structuredClone(v), work);
    }
    case 'test':
      if (JSON.stringify(canonical(get(out, raw.path))) !== JSON.stringify(canonical(raw.value))) {
        throw errors.invalidPatch(`testing value ${raw.path} failed: test failed`);
      }
      return out;
    default:
      throw errors.invalidPatch(`Unexpected kind: ${raw.op}`);
  }
}

/** The JSON size of a value, in UTF-8 bytes. */
function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? 'null');
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}
