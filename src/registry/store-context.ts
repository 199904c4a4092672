/**
 * What a generic store is built from (its resource, storage identity, strategy and conversions),
 * and the reply shape its verbs return. Shared by the store (store.ts, read-store.ts) and the
 * strategy steps of its writes (prepare.ts).
 */
import type { ResourceDef } from './types.js';
import type { ResourceStrategy, StrategyConfig } from './strategy.js';
import type { TypeCache } from '../storage/cacher/type-cache.js';
import type { Conversion } from './conversion.js';
import type { Converter } from './conversion/conversion.js';
import type { SchemaNode } from '../schema/schema.js';
import type { PageMeta } from './ops.js';

export interface StoreContext {
  def: ResourceDef;
  /** the storage identity shared by every version of the resource: `<group>/<resource>` */
  typeKey: string;
  cache: TypeCache;
  strategy: ResourceStrategy;
  continueTtlMs: number;
  config: StrategyConfig;
  /** the group as the reference schema names it (differs from def.group under another --api-domain) */
  referenceGroup?: string;
  /** set when objects are stored in another version than this store's (events.<domain>/v1) */
  conversion?: Conversion;
  /** converts between the served versions of a multi-version type (conversion/conversion.ts) */
  converter?: Converter;
  /** the structural schema when not the reference one's (custom resources) */
  schema?: SchemaNode;
  /** custom resources: the CRD's selectable fields, of this version (selectors) and of the storage version (entries) */
  selectableFields?: { served: readonly string[]; stored: readonly string[] };
}

export type Ok = { code: number; body: string | Uint8Array; contentType: string; warnings?: string[]; page?: PageMeta };

export function withWarnings(ok: Ok, warnings: string[]): Ok {
  return warnings.length ? { ...ok, warnings } : ok;
}

export function apiVersionOf(def: { group: string; version: string }): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export const CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';
