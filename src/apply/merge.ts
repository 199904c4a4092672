/** Merging an applied configuration into the live object, by the schema's list and map types. */
import type { SchemaNode } from '../schema/schema.js';
import { keyElement } from './fieldset.js';

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

export function mergeApplied(live: any, applied: any, schema: SchemaNode | undefined): any {
  if (isObj(applied) && isObj(live) && schema?.mapType !== 'atomic' && schema?.kind !== 'scalar') {
    const out: Record<string, any> = { ...live };
    for (const [k, v] of Object.entries(applied)) {
      const sub = schema?.kind === 'struct' ? schema.props?.[k] : schema?.kind === 'map' ? schema.elem : undefined;
      out[k] = v === null ? v : mergeApplied(live[k], v, sub);
      if (v === null) delete out[k];
    }
    return out;
  }
  if (Array.isArray(applied) && Array.isArray(live) && schema?.kind === 'list') {
    if (schema.listType === 'set') return [...live, ...applied.filter((x) => !live.some((y) => JSON.stringify(y) === JSON.stringify(x)))];
    if (schema.listType === 'map' && schema.mapKeys) {
      const keys = schema.mapKeys;
      const out = [...live];
      for (const item of applied) {
        if (!isObj(item)) continue;
        const id = keyElement(item, keys);
        const i = out.findIndex((x) => isObj(x) && keyElement(x, keys) === id);
        if (i >= 0) out[i] = mergeApplied(out[i], item, schema.elem); else out.push(structuredClone(item));
      }
      return out;
    }
  }
  return structuredClone(applied);
}
