/**
 * Storage leases of kinds with a TTL (Events): the expiry time of each object, stored beside the
 * objects under `\0lease/<group>/<resource>/<namespace>/<name>` (the NUL keeps them out of every
 * type's key range) and written in the same transaction as the object (upstream: an etcd lease
 * per write). Holds the key layout, the lease write of a staged write, and the repair at start.
 */
import { CommitConflict, type Backend, type Write } from '../storage/interface.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import type { StagedWrite } from '../registry/txn.js';
import type { Lease } from './protocol.js';

export const LEASE_PREFIX = '\u0000lease/';
export const leaseId = (typeKey: string, namespace: string, name: string): string => `${typeKey}/${namespace}/${name}`;

/** A stored object of a kind with a TTL: its type, its cache entry and its kind's TTL (ms, > 0). */
export type LeasedEntry = readonly [typeKey: string, entry: Entry, ttl: number];

/** The lease write that goes with a staged write; undefined for kinds without a TTL. */
export function leaseWrite(w: StagedWrite): Write | undefined {
  if (w.expiresAt === undefined) return undefined;
  return {
    key: LEASE_PREFIX + leaseId(w.typeKey, w.entry.namespace, w.entry.name),
    value: w.expiresAt ? String(w.expiresAt) : undefined,
  };
}

/** Every stored lease: lease id → expiry (ms since the epoch). */
export async function storedLeases(backend: Backend): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  for await (const page of backend.range(LEASE_PREFIX))
    for (const { key, value } of page) stored.set(key.slice(LEASE_PREFIX.length), Number(value));
  return stored;
}

/**
 * The lease of every stored object of a kind with a TTL. An object without one (written
 * before its kind had a TTL) gets a full TTL from now, stored at once so that a restart
 * never extends it; leases whose object is gone are dropped. `stored` is consumed.
 */
export async function loadLeases(
  backend: Backend,
  floor: number,
  stored: Map<string, number>,
  leased: Iterable<LeasedEntry>,
): Promise<Lease[]> {
  const leases: Lease[] = [];
  const writes: Write[] = [];
  const now = Date.now();
  for (const [typeKey, e, ttl] of leased) {
    const id = leaseId(typeKey, e.namespace, e.name);
    let expiresAt = stored.get(id);
    if (expiresAt === undefined) writes.push({ key: LEASE_PREFIX + id, value: String((expiresAt = now + ttl)) });
    stored.delete(id);
    leases.push({ typeKey, namespace: e.namespace, name: e.name, rv: e.rv, expiresAt });
  }
  for (const id of stored.keys()) writes.push({ key: LEASE_PREFIX + id, value: undefined });
  try {
    if (writes.length) await backend.commit(writes, floor);
  } catch (e) {
    // another server started at the same time and wrote first: it repairs the leases too
    if (!(e instanceof CommitConflict)) throw e;
  }
  return leases;
}
