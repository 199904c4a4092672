/**
 * Objects whose stored value cannot be read (undecryptable or undecodable), found when the
 * shard loads its keys. They are kept out of the caches; any operation that would read one
 * answers upstream's 500 naming the storage key, and a DELETE with
 * `ignoreStoreReadErrorWithClusterBreakingPotential` (gate AllowUnsafeMalformedObjectDeletion,
 * checked on the front thread) removes it without reading it: finalizers and preconditions are
 * ignored (resource-api.md, "Object deletion", last row).
 */
import { errors, successStatus } from '../api/status.js';
import { contentTypeOf, encode } from '../codec/codec.js';
import type { Op, Result } from './protocol.js';
import type { Entry } from '../storage/cacher/type-cache.js';

interface Corrupt {
  key: string;
  namespace: string;
  cause: string;
}

/** upstream storage.StorageError text for a corrupt object */
export function corruptMessage(key: string, cause: string): string {
  return `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${cause}`;
}

export class CorruptObjects {
  /** typeKey → "<namespace>/<name>" → what is wrong */
  private readonly byType = new Map<string, Map<string, Corrupt>>();

  /** Records a key `<group>/<resource>/<namespace>/<name>` that failed to load. */
  add(key: string, cause: string): void {
    const typeEnd = key.indexOf('/', key.indexOf('/') + 1);
    const typeKey = key.slice(0, typeEnd);
    const rest = key.slice(typeEnd + 1);
    let m = this.byType.get(typeKey);
    if (!m) this.byType.set(typeKey, (m = new Map()));
    m.set(rest, { key, namespace: rest.slice(0, rest.indexOf('/')), cause });
  }

  get size(): number {
    let n = 0;
    for (const m of this.byType.values()) n += m.size;
    return n;
  }

  /**
   * Before an operation on typeKey: throws the 500 when it would read a corrupt object;
   * returns the key to remove for an unsafe delete of one; undefined otherwise.
   */
  check(op: Op, typeKey: string): string | undefined {
    const m = this.byType.get(typeKey);
    if (!m || m.size === 0) return undefined;
    if (op.op === 'list' || op.op === 'deletecollection' || op.op === 'watch') {
      const bad = [...m.values()].filter((c) => !op.namespace || c.namespace === op.namespace);
      if (bad.length) throw errors.internal(bad.map((c) => corruptMessage(c.key, c.cause)).join('; '));
      return undefined;
    }
    const c = m.get(`${op.namespace}/${'name' in op ? (op.name ?? '') : ''}`);
    if (!c) return undefined;
    if (op.op === 'delete' && op.options.ignoreStoreReadErrorWithClusterBreakingPotential) return c.key;
    throw errors.internal(corruptMessage(c.key, c.cause));
  }

  /**
   * A stand-in entry for a corrupt object's name (only its existence is used: creates of the
   * name conflict; every other operation on it is stopped earlier by check()).
   */
  placeholder(typeKey: string, namespace: string, name: string): Entry | undefined {
    if (!this.byType.get(typeKey)?.has(`${namespace}/${name}`)) return undefined;
    return {
      namespace,
      name,
      rv: 0,
      obj: { metadata: { name, namespace } },
      json: '{}',
      apiVersion: '',
      labels: undefined,
      fields: {},
    };
  }

  /** Forgets a key once its removal is committed. */
  remove(key: string): void {
    const typeEnd = key.indexOf('/', key.indexOf('/') + 1);
    this.byType.get(key.slice(0, typeEnd))?.delete(key.slice(typeEnd + 1));
  }
}

/** The reply to an unsafe delete: a Success Status (the object itself cannot be read). */
export function unsafeDeleteReply(op: Extract<Op, { op: 'delete' }>): Result {
  const details = { name: op.name, ...(op.type.group ? { group: op.type.group } : {}), kind: op.type.resource };
  return { id: op.id, code: 200, body: encode(successStatus(details), op.enc), contentType: contentTypeOf(op.enc) };
}
