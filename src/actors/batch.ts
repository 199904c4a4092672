/**
 * One batch of a shard: the transaction its operations share (reads see committed state plus
 * the writes staged earlier in the batch; an operation that fails after staging takes its writes
 * back, so a failure never half-writes) and the durable commit of what the batch staged.
 */
import type { Entry } from '../storage/cacher/type-cache.js';
import { entryKey } from '../storage/cacher/type-cache.js';
import type { Backend, Write } from '../storage/interface.js';
import type { Transformers } from '../storage/encryption/transformer.js';
import type { StagedWrite, Txn } from '../registry/txn.js';
import type { CorruptObjects } from './corrupt.js';
import type { Result } from './protocol.js';
import { leaseWrite } from './leases.js';

/** `<typeKey>\u0001<entry key>` → a staged entry (undefined = deleted) */
export type Staged = Map<string, Entry | undefined>;

export class Batch {
  /** the writes staged so far, in order */
  readonly staged: StagedWrite[] = [];
  readonly txn: Txn;
  /** this batch's staged entries (earlier batches of a pipeline read them until it is published) */
  readonly pending: Staged = new Map();
  /** what each stage replaced in `pending`, to take an operation's writes back */
  private readonly undo: [string, boolean, Entry | undefined][] = [];

  /**
   * rv: the shared revision counter; corrupt: objects that still occupy their names; earlier:
   * the staged entries of earlier batches whose commit is still in flight (pipelined, oldest
   * first): this batch reads them over the committed state, as if they were committed.
   */
  constructor(rv: BigInt64Array, corrupt: CorruptObjects, earlier: readonly Staged[] = []) {
    const { pending, undo, staged } = this;
    const snapshot = Number(Atomics.load(rv, 0));
    this.txn = {
      now: Date.now(),
      read: (cache, typeKey, ns, name) => {
        const k = typeKey + '\u0001' + entryKey(ns, name);
        if (pending.has(k)) return pending.get(k);
        for (let i = earlier.length - 1; i >= 0; i--) if (earlier[i]!.has(k)) return earlier[i]!.get(k);
        // a corrupt object still occupies its name: a create of it is a conflict
        return cache.get(ns, name) ?? (corrupt.size ? corrupt.placeholder(typeKey, ns, name) : undefined);
      },
      nextRV: () => Number(Atomics.add(rv, 0, 1n)) + 1,
      currentRV: () => snapshot,
      stage: (w) => {
        const k = w.typeKey + '\u0001' + entryKey(w.entry.namespace, w.entry.name);
        undo.push([k, pending.has(k), pending.get(k)]);
        staged.push(w);
        pending.set(k, w.type === 'DELETED' ? undefined : w.entry);
      },
      staged: (typeKey) => {
        const out = new Map<string, Entry | undefined>();
        const prefix = typeKey + '\u0001';
        for (const m of [...earlier, pending])
          for (const [k, v] of m) if (k.startsWith(prefix)) out.set(k.slice(prefix.length), v);
        return out;
      },
    };
  }

  /** Runs one operation on the batch; when it fails after staging, its writes are taken back. */
  run(exec: (txn: Txn) => Result): Result {
    const mark = this.staged.length;
    const undoMark = this.undo.length;
    const r = exec(this.txn);
    if ('error' in r && this.staged.length > mark) {
      this.staged.length = mark;
      for (const [k, had, v] of this.undo.splice(undoMark).reverse())
        if (had) this.pending.set(k, v);
        else this.pending.delete(k);
    }
    return r;
  }
}

/**
 * Commits staged writes (with their leases) and the raw deletes of corrupt keys in one durable
 * transaction; rawRV: the revision the raw deletes took (0 without any). failMatch (test-only,
 * --test-fail-commit-match; '' in production): a commit holding a key that contains this text
 * fails as a backend refusal would, for the tests of commit isolation. written: see Backend.commit.
 */
export async function commitBatch(
  backend: Backend,
  transformers: Transformers,
  staged: StagedWrite[],
  rawRV = 0,
  rawDeletes: string[] = [],
  failMatch = '',
  written?: () => void,
): Promise<void> {
  const writes: Write[] = [];
  for (const w of staged) {
    const key = `${w.typeKey}/${w.entry.namespace}/${w.entry.name}`;
    writes.push(
      w.type === 'DELETED'
        ? { key, value: undefined, rv: w.entry.rv }
        : { key, value: transformers.forType(w.typeKey).write(key, w.entry.json) },
    );
    const lease = leaseWrite(w);
    if (lease) writes.push(lease);
  }
  for (const key of rawDeletes) writes.push({ key, value: undefined });
  if (failMatch && writes.some((w) => w.key.includes(failMatch))) {
    throw new Error('injected commit failure (--test-fail-commit-match)');
  }
  const maxRV = staged.reduce((m, w) => Math.max(m, w.entry.rv), rawRV);
  await backend.commit(writes, maxRV, written);
}
