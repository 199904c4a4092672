/**
 * Changes that reach a shard actor from a shared store (another API server's commits, through
 * the backend's follow()): decoded into the same writes and change events as local commits.
 */
import { selectableChanged } from '../api/watch-filter.js';
import type { ChangeEvent } from './protocol.js';
import type { RemoteChange } from '../storage/interface.js';
import type { HistoryEvent } from '../storage/cacher/type-cache.js';
import type { Store } from '../registry/store.js';
import type { StagedWrite } from '../registry/txn.js';
import type { Transformers } from '../storage/encryption/transformer.js';
import type { CorruptObjects } from './corrupt.js';

/** A remote change as the write it is (undefined: not a type this server serves, or no-op). */
export function remoteWrite(c: RemoteChange, storeForKey: (typeKey: string) => Store | undefined, transformers: Transformers, corrupt: CorruptObjects): StagedWrite | undefined {
  const slash = c.key.indexOf('/', c.key.indexOf('/') + 1);
  const typeKey = c.key.slice(0, slash);
  const store = storeForKey(typeKey);
  if (!store) return undefined;
  const cache = store.ctx.cache;
  if (c.value === undefined) {
    const rest = c.key.slice(slash + 1);
    const cut = rest.indexOf('/');
    const prev = cache.get(rest.slice(0, cut), rest.slice(cut + 1));
    corrupt.remove(c.key);
    if (!prev) return undefined;
    // the DELETED event carries the final state at the delete's version, as a local delete does
    const last = structuredClone(prev.obj);
    last.metadata.resourceVersion = String(c.rv);
    return { typeKey, type: 'DELETED', entry: store.entryOf(last) };
  }
  try {
    const entry = store.entryOf(JSON.parse(transformers.forType(typeKey).read(c.key, c.value)));
    corrupt.remove(c.key);
    return { typeKey, type: cache.get(entry.namespace, entry.name) ? 'MODIFIED' : 'ADDED', entry };
  } catch (e) {
    corrupt.add(c.key, (e as Error).message);
    return undefined;
  }
}


/** A committed write, already applied to its cache (ev), as the front thread's change event. */
export function changeEvent(w: StagedWrite, ev: HistoryEvent): ChangeEvent {
  const out: ChangeEvent = {
    typeKey: w.typeKey, type: w.type, rv: w.entry.rv, namespace: w.entry.namespace, name: w.entry.name,
    json: w.entry.json, labels: w.entry.labels, fields: w.entry.fields,
    prevLabels: ev.prev?.labels, prevFields: ev.prev?.fields, uid: w.entry.obj.metadata.uid, apiVersion: w.entry.obj.apiVersion,
  };
  const meta = w.entry.obj.metadata;
  if (meta.ownerReferences?.length) out.owners = meta.ownerReferences;
  if (meta.finalizers?.length) out.finalizers = meta.finalizers;
  if (meta.deletionTimestamp) out.deleting = true;
  if (w.expiresAt) out.expiresAt = w.expiresAt;
  if (w.type === 'MODIFIED' && selectableChanged(w.entry, ev.prev)) out.prevJson = ev.prev!.json;
  return out;
}

/** Raises the shared resourceVersion counter to at least rv (later local writes go above it). */
export function raiseRV(counter: BigInt64Array, rv: number): void {
  const want = BigInt(rv);
  for (;;) {
    const cur = Atomics.load(counter, 0);
    if (cur >= want || Atomics.compareExchange(counter, 0, cur, want) === cur) return;
  }
}
