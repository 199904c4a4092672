/**
 * Changes that reach a shard actor from a shared store (another API server's commits, through
 * the backend's follow()): decoded into the same writes and change events as local commits.
 */
import { selectableChanged } from '../api/watch-filter.js';
import { errors, type Status } from '../api/status.js';
import type { ChangeEvent, Op } from './protocol.js';
import { CommitConflict, StoreUnavailable, type RemoteChange } from '../storage/interface.js';
import type { HistoryEvent } from '../storage/cacher/type-cache.js';
import type { Store } from '../registry/store.js';
import type { StagedWrite } from '../registry/txn.js';
import type { Transformers } from '../storage/encryption/transformer.js';
import type { CorruptObjects } from './corrupt.js';
import { copyValue } from '../schema/deep-value.js';
import { quotaFor } from './pod-quota.js';

/** times a batch runs again after another server's commit beat it, before it fails */
export const MAX_CONFLICT_RETRIES = 32;
/** longest wait of an idle poll (Batch.poll) */
const POLL_MS = 1000;

/** A read of the newest state (no resourceVersion): on a shared store it needs backend.sync(). */
export function consistentRead(op: Op): boolean {
  if (op.op === 'get') return !op.resourceVersion;
  if (op.op === 'list' || op.op === 'watch') return !op.opts.resourceVersion && !op.opts.continue;
  return false;
}

/** 503 while the store is unreachable, 504 when it did not answer in time (never a hang). */
export function unavailableStatus(e: unknown): Status {
  if (e instanceof CommitConflict)
    return errors.timeout(
      `Timeout: request did not complete within requested timeout - ${MAX_CONFLICT_RETRIES} conflicting commits by other servers`,
    ).status;
  const msg = (e as Error).message;
  if (e instanceof StoreUnavailable && e.timeout)
    return errors.timeout(`Timeout: request did not complete within requested timeout - ${msg}`).status;
  return errors.serviceUnavailable(`storage is unavailable: ${msg}`).status;
}

/** Change events of other servers' commits, held for the actor's next reply (or an idle poll). */
export class RemoteFeed {
  private outbox: ChangeEvent[] = [];
  private wakePoll: (() => void) | undefined;

  push(ev: ChangeEvent): void {
    this.outbox.push(ev);
  }

  /** wakes a waiting poll once a commit's events are queued */
  arrived(): void {
    this.wakePoll?.();
  }

  take(): ChangeEvent[] {
    const out = this.outbox;
    this.outbox = [];
    return out;
  }

  /**
   * An idle poll: until changes arrive, work queues (the front thread moves the wake counter past
   * seen), a batch arrives (endPoll) or POLL_MS; resolves with the changes it answers with.
   */
  async waitForWork(seen: number, wakeBuffer: SharedArrayBuffer | undefined): Promise<ChangeEvent[]> {
    if (this.outbox.length || !wakeBuffer) return this.take();
    let taken: ChangeEvent[] | undefined;
    const arrived = new Promise<void>((resolve) => {
      // taken at once: a batch that ended the poll takes only what arrives after
      this.wakePoll = () => {
        taken ??= this.take();
        resolve();
      };
    });
    const woken = (
      Atomics as unknown as {
        waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<string> | string };
      }
    ).waitAsync(new Int32Array(wakeBuffer), 0, seen, POLL_MS);
    if (woken.async) await Promise.race([arrived, woken.value]);
    this.wakePoll = undefined;
    return taken ?? this.take();
  }

  /**
   * A batch arrived while a poll waits (a shard with two tasks in flight): the poll, answered
   * first, takes the changes queued so far, so the batch's reply carries only later ones.
   */
  endPoll(): void {
    this.wakePoll?.();
  }
}

/** A remote change as the write it is (undefined: not a type this server serves, or no-op). */
export function remoteWrite(
  c: RemoteChange,
  storeForKey: (typeKey: string) => Store | undefined,
  transformers: Transformers,
  corrupt: CorruptObjects,
): StagedWrite | undefined {
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
    const last = copyValue(prev.obj);
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
    typeKey: w.typeKey,
    type: w.type,
    rv: w.entry.rv,
    namespace: w.entry.namespace,
    name: w.entry.name,
    json: w.entry.json,
    labels: w.entry.labels,
    fields: w.entry.fields,
    prevLabels: ev.prev?.labels,
    prevFields: ev.prev?.fields,
    uid: w.entry.obj.metadata.uid ?? '',
    apiVersion: w.entry.apiVersion,
  };
  const meta = w.entry.obj.metadata;
  if (meta.ownerReferences?.length) out.owners = meta.ownerReferences;
  if (meta.finalizers?.length) out.finalizers = meta.finalizers;
  if (meta.deletionTimestamp) out.deleting = true;
  if (w.expiresAt) out.expiresAt = w.expiresAt;
  const quota = w.type === 'DELETED' ? undefined : quotaFor(w.typeKey, () => w.entry.obj);
  if (quota) out.quota = quota;
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
