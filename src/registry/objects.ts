/**
 * Object-shaping rules of the generic store that need no store state: decoding a request body
 * against the path, stamping a patched object, comparisons that ignore key order, generation.
 */
import { errors } from '../api/status.js';
import type { Body } from '../codec/types.js';
import { decodeBody } from '../codec/codec.js';
import type { DecodeNotes } from '../schema/fields.js';
import { same } from './strategies/field-errors.js';
import { isObjectBody, isRecord, type KubeObject, type ObjectMeta, type Stored } from '../api/object.js';
import type { ResourceDef } from './types.js';

/** A user-supplied value inside a message: strings as they are, anything else as JSON. */
export function shown(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(typeof v));
}

/** How a patch body is worded in field validation findings (upstream's decoders differ). */
export const PATCH_DECODED_AS = { json: 'json-patch', merge: 'patch', strategic: 'patch', apply: 'apply' } as const;

export const decodeNotes = (body: Body): DecodeNotes => ({
  as: body.contentType === 'yaml' ? 'yaml' : 'object',
  duplicates: [],
});

/** Puts metadata.namespace in line with the path (400 on a mismatch; cleared for cluster scope). */
function placeInNamespace(def: ResourceDef, meta: ObjectMeta, namespace: string): void {
  if (def.namespaced) {
    if (meta.namespace && meta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  } else {
    delete meta.namespace;
  }
}

/** metadata of an object written without any: no name yet (generateName, or a 422 from validation) */
const noMetadata = (): Stored['metadata'] => ({}) as Stored['metadata'];

/** Decodes a request body and checks kind, apiVersion and namespace against the request path. */
export function decodeObject(
  def: ResourceDef,
  apiVersion: string,
  body: Body,
  namespace: string,
  notes: DecodeNotes,
): Stored {
  // typed as stored: every field the store relies on is checked here or by validation (a
  // missing metadata.name is reported by metadataCauses before anything is stored)
  const decoded: unknown = {
    kind: def.kind,
    apiVersion,
    metadata: {},
    ...decodeBody(body, notes.duplicates, def.kind),
  };
  if (!isObjectBody(decoded)) throw errors.badRequest('the object must be a JSON object'); // never: a spread object
  const obj = decoded;
  if (obj.apiVersion !== apiVersion) {
    throw errors.badRequest(
      `the API version in the data (${shown(obj.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (obj.kind !== def.kind) {
    throw errors.badRequest(`the kind in the data (${shown(obj.kind)}) does not match the expected kind (${def.kind})`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = noMetadata();
  if (!isRecord(obj.metadata)) throw errors.badRequest('metadata must be an object');
  placeInNamespace(def, obj.metadata, namespace);
  return obj;
}

/** Stamps kind and apiVersion on a patched object and checks its namespace. */
export function identifyPatched(def: ResourceDef, apiVersion: string, patched: unknown, namespace: string): Stored {
  if (!isObjectBody(patched)) throw errors.badRequest('the patched object must be a JSON object');
  const obj = patched;
  obj.kind = def.kind;
  obj.apiVersion = apiVersion;
  if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = noMetadata();
  placeInNamespace(def, obj.metadata, namespace);
  return obj;
}

/**
 * metadata.generation exists for kinds whose spec is desired state reconciled by a
 * controller (named groups with a spec, and ReplicationControllers), as upstream.
 */
export function tracksGeneration(def: ResourceDef, obj: KubeObject): boolean {
  // custom resources always have one (upstream's customresource strategy)
  if (def.custom) return true;
  return obj.spec !== undefined && (def.group !== '' || def.resource === 'replicationcontrollers');
}

/**
 * Equal as stored, whatever the key order (defaulting appends fields a write left out): a deep
 * comparison that stops at the first difference, checking the fields other than metadata
 * first, where writes usually differ. No JSON text is built.
 */
export function sameStored(x: object, y: object): boolean {
  // own properties read by name (no copy: this runs on every update)
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (k !== 'metadata' && !(Object.hasOwn(b, k) && same(a[k], b[k]))) return false;
  return same(a.metadata, b.metadata);
}

/**
 * Whether a write of `next` stores nothing new over `old` (next may carry another
 * resourceVersion): equal as stored, or equal but for the `time` of managedFields entries
 * (upstream's IgnoreManagedFieldsTimestampsTransformer: a write that changed nothing, stamped in
 * another second, is a no-op, not a new resourceVersion). The rest of the object is compared
 * first, so a real change never walks the managedFields.
 */
export function unchangedWrite(next: Stored, old: Stored): boolean {
  // a new generation (an update that changed the spec: src/registry/prepare.ts) differs in
  // metadata whatever else does, so the comparisons below could only answer false
  if (next.metadata.generation !== old.metadata.generation) return false;
  const base = { ...old, metadata: { ...old.metadata, resourceVersion: next.metadata.resourceVersion } };
  if (sameStored(next, base)) return true;
  const fields = next.metadata.managedFields;
  const was = old.metadata.managedFields;
  if (!Array.isArray(fields) || !Array.isArray(was) || fields === was) return false;
  return (
    sameStored({ ...next, metadata: { ...next.metadata, managedFields: was } }, base) && managedTimesOnly(fields, was)
  );
}

/** Entries equal but for their `time` (false for the same list, or entries too deep to compare). */
export function managedTimesOnly(next: unknown, old: unknown): boolean {
  if (!Array.isArray(next) || !Array.isArray(old) || next.length !== old.length || next === old) return false;
  try {
    return next.every((e, i) => same(untimed(e), untimed(old[i])));
  } catch (e) {
    if (e instanceof RangeError) return false; // nesting past the stack: compared as changed
    throw e;
  }
}

const untimed = (e: unknown): unknown => {
  if (!isRecord(e)) return e;
  const copy = { ...e };
  delete copy.time;
  return copy;
};

/**
 * same() (strategies/field-errors.ts: equal JSON values, key order ignored), the same answer
 * without its two key arrays and its closure per object level: own keys counted and looked up
 * in one pass. Arrays (a level or two of a spec) are left to same().
 */
function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return same(a, b);
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    if (!Object.hasOwn(y, k) || !sameTree(x[k], y[k])) return false;
    n++;
  }
  for (const k in y) if (Object.hasOwn(y, k) && --n < 0) return false;
  return n === 0;
}

/** the top-level fields a generation ignores */
const NOT_SPEC = new Set(['metadata', 'status', 'kind', 'apiVersion']);

/**
 * Whether a field other than metadata, status, kind and apiVersion differs (semantically; a
 * field present as undefined counts as absent). Hot path (every update of a kind with a
 * generation): own properties read by name, the two objects not copied, no key set built; the
 * fields of `obj` first, then those only `old` has.
 */
export function specChanged(obj: KubeObject, old: KubeObject): boolean {
  const a = obj as Record<string, unknown>;
  const b = old as Record<string, unknown>;
  for (const k of Object.keys(a)) if (!NOT_SPEC.has(k) && !sameTree(a[k], b[k])) return true;
  for (const k of Object.keys(b)) if (!NOT_SPEC.has(k) && !Object.hasOwn(a, k) && b[k] !== undefined) return true;
  return false;
}

/** the last second formatted: every write of a batch (and of the same second) stamps the same time */
let lastSecond = NaN;
let lastStamp = '';

export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastStamp = new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = sec;
  }
  return lastStamp;
}

/** Largest stored object (JSON bytes): etcd's default --max-request-bytes, so either backend holds it. */
export const MAX_OBJECT_BYTES = 1536 * 1024;
const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** metadata.generateName: the prefix (cut to 58) plus 5 random characters, a free name within 8 tries, else undefined. */
export function generateName(prefix: string, taken: (name: string) => boolean): string | undefined {
  const base = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  for (let i = 0; i < 8; i++) {
    let s = base;
    for (let j = 0; j < 5; j++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
    if (!taken(s)) return s;
  }
  return undefined;
}
