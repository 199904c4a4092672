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

function walk(v: unknown, s: SchemaNode, path: string, out: StatusCause[]): void {
  if (s.kind === 'list') {
    if (Array.isArray(v) && mayRequire(s.elem)) v.forEach((x, i) => walk(x, s.elem!, `${path}[${i}]`, out));
  } else if (s.kind === 'map') {
    if (isObj(v) && mayRequire(s.elem)) for (const [k, x] of Object.entries(v)) walk(x, s.elem!, `${path}[${k}]`, out);
  } else if (s.kind === 'struct' && isObj(v)) {
    const at = (k: string) => (path ? `${path}.${k}` : k);
    for (const k of s.required ?? []) {
      if ((v[k] === undefined || v[k] === null) && !NOT_ENFORCED.has(`${s.name}.${k}`)) {
        out.push({ reason: 'FieldValueRequired', message: 'Required value', field: at(k) });
      }
    }
    for (const k in v) {
      const sub = s.props && (ownValue(s.props, k) as SchemaNode | undefined);
      if (sub && mayRequire(sub) && !(path === '' && k === 'status')) walk(v[k], sub, at(k), out);
    }
  }
}

/** Causes for the required fields obj lacks, in document order, parents before children. */
export function requiredCauses(obj: unknown, schema: SchemaNode | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  if (schema) walk(obj, schema, '', out);
  return out;
}
