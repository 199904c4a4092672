/**
 * Defaulting of custom resources: the `default` values of a CRD version's openAPIV3Schema,
 * compiled once per schema into a Defaulter that fills absent fields in place.
 */
import { ownValue, setOwn } from '../../api/own-keys.js';
import { isObj, type Raw } from './structural.js';

/** Fills defaults in place; compiled once per schema (only the branches that hold a default are walked). */
export type Defaulter = (v: unknown) => void;

/** The defaulter of a schema level, or undefined when nothing below it has a default. */
function defaulterOf(s: unknown, root: boolean): Defaulter | undefined {
  if (!isObj(s)) return undefined;
  if (s.type === 'array' || isObj(s.items)) {
    const item = defaulterOf(s.items, false);
    return (
      item &&
      ((v) => {
        if (Array.isArray(v)) for (const x of v) item(x);
      })
    );
  }
  if (isObj(s.properties)) {
    const fields: [string, unknown, Defaulter | undefined, boolean][] = [];
    for (const [k, ps] of Object.entries(s.properties as Record<string, Raw>)) {
      if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      const d = isObj(ps) ? ps.default : undefined;
      const child = defaulterOf(ps, false);
      if (d !== undefined || child) fields.push([k, d, child, isObj(ps) && ps.nullable === true]);
    }
    if (!fields.length) return undefined;
    // null is kept where the schema is nullable; elsewhere it is pruned, and the default applies (upstream)
    return (v) => {
      if (!isObj(v)) return;
      for (const [k, d, child, nullable] of fields) {
        // a property named `constructor` or `__proto__` is a property: own keys only
        const cur = ownValue(v, k);
        if ((cur === undefined || (cur === null && !nullable)) && d !== undefined)
          setOwn(v, k, typeof d === 'object' && d !== null ? structuredClone(d) : d);
        const now = ownValue(v, k);
        if (child && now !== undefined) child(now);
      }
    };
  }
  if (isObj(s.additionalProperties)) {
    const value = defaulterOf(s.additionalProperties, false);
    return (
      value &&
      ((v) => {
        if (isObj(v)) for (const k in v) value(v[k]);
      })
    );
  }
  return undefined;
}

/** The defaulter of a whole custom resource schema (a no-op when it has no defaults). */
export function compileDefaults(schema: Raw): Defaulter {
  return defaulterOf(schema, true) ?? (() => {});
}

/** Whether the schema declares a default anywhere the defaulter reaches. */
export function hasDefaults(schema: Raw): boolean {
  return defaulterOf(schema, true) !== undefined;
}

/** Sets `default` values for absent fields wherever their parent object exists (never metadata). */
export function applyDefaults(v: unknown, s: Raw | undefined): void {
  compileDefaults(s ?? {})(v);
}
