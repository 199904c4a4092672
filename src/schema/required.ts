/**
 * Required fields: one `Required value` cause per field the reference schema lists as required
 * that an object lacks (absent or null). Runs after defaulting, beside the kind's own
 * validation; status is the status writers' business and is not checked.
 */
import type { StatusCause } from '../api/status.js';
import type { SchemaNode } from './schema.js';
import { ownValue } from '../api/own-keys.js';

/**
 * Fields the schema lists as required (upstream: Go fields without omitempty) that upstream's
 * validation accepts missing, since a Go decode gives them their zero value: checking them
 * would refuse objects upstream stores.
 */
const NOT_ENFORCED = new Set([
  'io.plat.api.apps.v1.StatefulSetSpec.serviceName',
  'io.plat.api.apps.v1.ControllerRevision.revision',
  'io.plat.api.core.v1.Event.involvedObject',
  'io.plat.api.core.v1.LimitRangeSpec.limits',
  'io.plat.api.discovery.v1.EndpointSlice.endpoints',
  // required on create by the v1 Event rules themselves; an update through events.plat.io/v1 of
  // an Event written through core v1 (no eventTime) is accepted upstream
  'io.plat.api.events.v1.Event.eventTime',
  'io.plat.api.networking.v1.NetworkPolicySpec.podSelector',
  'io.plat.api.scheduling.v1.PriorityClass.value',
  'io.plat.api.storage.v1.CSIDriver.spec',
]);

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Whether anything at or below a node can be required (memoized; cycles count as yes). */
const reaches = new WeakMap<SchemaNode, boolean>();
function mayRequire(s: SchemaNode | undefined): boolean {
  if (!s || s.kind === 'scalar' || s.kind === 'any') return false;
  let r = reaches.get(s);
  if (r !== undefined) return r;
  reaches.set(s, true);
  r = !!s.required?.length || mayRequire(s.elem) || Object.values(s.props ?? {}).some(mayRequire);
  reaches.set(s, r);
  return r;
}

/**
 * The path of the value being walked, as segments (`a`, `.b`, `[0]`, `[key]`) joined only when
 * a cause names it: most walks find nothing, and then build no path string per visited field.
 */
class PathStack {
  private readonly segments: string[] = [];
  private empty = 0; // how many segments are '' (the path is '' while all are)
  get isRoot(): boolean {
    return this.empty === this.segments.length;
  }
  push(seg: string): void {
    this.segments.push(seg);
    if (!seg) this.empty++;
  }
  pop(): void {
    if (!this.segments.pop()) this.empty--;
  }
  /** `<path>.<k>`, or `k` at the root (as the path would have been written) */
  at(k: string): string {
    return this.isRoot ? k : `${this.segments.join('')}.${k}`;
  }
  /** the segment that extends the path by struct field k */
  field(k: string): string {
    return this.isRoot ? k : `.${k}`;
  }
}

/**
 * prev: the value at the same path of an object that had no cause (see requiredCauses); a child
 * that is the same reference there has none either and is not walked.
 */
function walk(v: unknown, s: SchemaNode, path: PathStack, out: StatusCause[], prev: unknown): void {
  if (s.kind === 'list') {
    if (Array.isArray(v) && mayRequire(s.elem)) {
      const p = Array.isArray(prev) ? prev : undefined;
      for (let i = 0; i < v.length; i++) child(v[i], s.elem!, `[${i}]`, path, out, p?.[i]);
    }
  } else if (s.kind === 'map') {
    if (isObj(v) && mayRequire(s.elem)) {
      const p = isObj(prev) ? prev : undefined;
      for (const k of Object.keys(v)) child(v[k], s.elem!, `[${k}]`, path, out, p && ownValue(p, k));
    }
  } else if (s.kind === 'struct' && isObj(v)) {
    for (const k of s.required ?? []) {
      if ((v[k] === undefined || v[k] === null) && !NOT_ENFORCED.has(`${s.name}.${k}`)) {
        out.push({ reason: 'FieldValueRequired', message: 'Required value', field: path.at(k) });
      }
    }
    const p = isObj(prev) ? prev : undefined;
    for (const k in v) {
      const sub = s.props && (ownValue(s.props, k) as SchemaNode | undefined);
      if (sub && mayRequire(sub) && !(path.isRoot && k === 'status'))
        child(v[k], sub, path.field(k), path, out, p && ownValue(p, k));
    }
  }
}

function child(v: unknown, s: SchemaNode, seg: string, path: PathStack, out: StatusCause[], prev: unknown): void {
  // an object or list shared with the previous object: checked when that was (scalars have nothing to check)
  if (prev !== undefined && v === prev && typeof v === 'object') return;
  path.push(seg);
  walk(v, s, path, out, prev);
  path.pop();
}

/**
 * Causes for the required fields obj lacks, in document order, parents before children.
 * previous: an object of the same kind and schema for which this gave no cause (a validated
 * object obj replaces, src/registry/validated.ts); the subtrees obj shares with it by reference
 * have no cause either and are skipped. The answer is the same with or without it.
 */
export function requiredCauses(obj: unknown, schema: SchemaNode | undefined, previous?: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  if (schema) walk(obj, schema, new PathStack(), out, previous);
  return out;
}
