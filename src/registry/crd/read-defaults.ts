/**
 * Defaults on read (upstream applies the structural defaults of the requested version whenever
 * it decodes a stored custom resource, so a default added to a CRD shows on objects stored
 * before it). Here the cached stored objects are re-defaulted when their storage version's
 * schema changes (and when a type's objects are loaded), and a read through another version
 * is defaulted with that version's schema as it is converted (Converter.setCustomStorage).
 * Nothing is written back: the stored bytes and resourceVersions stay as they are.
 */
import { compileDefaults, hasDefaults, type Defaulter } from './schema-defaults.js';
import { customVersion, type CustomType } from './types.js';
import type { Entry, TypeCache } from '../../storage/cacher/type-cache.js';

/** The defaulter of every served version that has defaults, by apiVersion. */
export function readDefaults(t: CustomType): Record<string, Defaulter> {
  const out: Record<string, Defaulter> = {};
  for (const v of t.versions) if (hasDefaults(v.schema)) out[`${t.group}/${v.name}`] = compileDefaults(v.schema);
  return out;
}

/** Whether a type's stored objects need defaulting again: it is new, or its storage version's schema changed. */
export function storageSchemaChanged(before: CustomType | undefined, now: CustomType): boolean {
  const schema = (t: CustomType | undefined) =>
    t ? JSON.stringify(customVersion(t, t.storageVersion)?.schema ?? null) : '';
  return !before || before.storageVersion !== now.storageVersion || schema(before) !== schema(now);
}

/** A stored object with the defaults applied (a copy), or undefined when they change nothing. */
export function defaulted(json: string, defaults: Defaulter | undefined): unknown {
  if (!defaults) return undefined;
  const copy: unknown = JSON.parse(json);
  defaults(copy);
  const after = JSON.stringify(copy);
  return after === json ? undefined : copy;
}

/**
 * The cached objects of a type defaulted again: each that changes is replaced by a new entry
 * (same resourceVersion, no history event, nothing written); returns the replaced entries.
 */
export function redefaultCache(
  cache: TypeCache,
  store: { entryOf(obj: unknown): Entry },
  defaults: Defaulter,
): Entry[] {
  const changed: Entry[] = [];
  for (const [, e] of [...cache.scan('', undefined)]) {
    const obj = defaulted(e.json, defaults);
    if (obj === undefined) continue;
    const entry = store.entryOf(obj);
    cache.load(entry);
    changed.push(entry);
  }
  return changed;
}
