/**
 * `storageVersionHash` of discovery's APIResource: upstream's StorageVersionHash (apiserver
 * endpoints/discovery) over the group, version and kind a resource is stored as, so clients
 * (the storage version migrator, garbage collector caches) see a change of storage version.
 */
import { createHash } from 'node:crypto';
import { groupFor } from '../api/identity.js';
import type { Registry } from './registry.js';
import type { ResourceDef } from './types.js';

/** base64 of the first 8 bytes of SHA-256 of `<group>/<version>/<kind>` (group "" for the core group). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * The hash of the resource's storage version, or undefined for resources that are not stored
 * (reviews, bindings, componentstatuses: no watch). Built-in resources are stored in the
 * group's highest-priority version that serves them (the preferred version, else the best
 * beta or alpha one, as upstream's storage overrides); events.<domain> events share the core
 * group's storage (cohabiting resources); custom resources use their CRD's storage version.
 */
export function storageHashOf(registry: Registry, r: ResourceDef): string | undefined {
  if (!r.verbs.includes('watch')) return undefined;
  if (r.custom) {
    const t = registry.customType(r.group, r.resource);
    return t && storageVersionHash(t.group, t.storageVersion, t.kind);
  }
  if (r.resource === 'events' && r.group === groupFor(registry.identity, 'events.plat.io'))
    return storageVersionHash('', 'v1', 'Event');
  const version =
    registry.group(r.group)?.versions.find((v) => registry.lookup(r.group, v, r.resource) !== undefined) ?? r.version;
  const stored = registry.lookup(r.group, version, r.resource) ?? r;
  return storageVersionHash(r.group, version, stored.kind);
}
