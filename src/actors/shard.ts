/**
 * One shard actor: owns the resource types that hash to it, their in-memory cache and their
 * backend. Serves a batch of operations per task: reads see committed state, writes are
 * staged, committed in one durable transaction, then made visible and broadcast as events.
 */
import type { Stored } from '../api/object.js';
import { configureProtobuf } from '../codec/codec.js';
import { compress } from './pack.js';
import { encodeForStreams, TRACE_EVENTS } from './stream-events.js';
import { monoUs } from '../metrics/process-metrics.js';
import { errors, toStatus } from '../api/status.js';
import type { ActorConfig, BatchReply, ChangeEvent, Encoding, InitReply, Lease, Op, Result } from './protocol.js';
import { CommitConflict, EarlierCommitFailed, StoreUnavailable, type RemoteChange } from '../storage/interface.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import { startWatch } from '../registry/watch.js';
import type { StagedWrite, Txn } from '../registry/txn.js';
import { Batch, commitBatch } from './batch.js';
import { Pipeline } from './pipeline.js';
import { LEASE_PREFIX, leaseId, loadLeases, storedLeases } from './leases.js';
import { shardOf, typeKeyOf } from './routing.js';
import { cachedObject, withQuota } from './pod-quota.js';
import { unsafeDeleteReply } from './corrupt.js';
import {
  MAX_CONFLICT_RETRIES,
  RemoteFeed,
  changeEvent,
  consistentRead,
  raiseRV,
  remoteWrite,
  unavailableStatus,
} from './remote.js';
import { ShardStores } from './shard-stores.js';
import { createBackend, overlaps, WRITES } from './shard-backend.js';
import { endTrace, mark, startTrace, type BatchTrace } from './write-trace.js';
import { EncodeAhead } from './encode-ahead.js';

/** A batch executed and not yet committed; epoch: the shard's discard count when it ran. */
interface Executed {
  batch: Batch;
  results: Result[];
  rawDeletes: string[];
  epoch: number;
  /** stage times (bench-only, PLAT_WRITE_TRACE) */
  trace?: BatchTrace;
}

export class Shard extends ShardStores {
  private readonly rv: BigInt64Array;
  /** keys of corrupt objects removed by unsafe deletes in the current batch */
  private rawDeletes: string[] = [];
  /** other servers' changes (shared store), applied to the caches, for the next reply */
  private readonly feed = new RemoteFeed();
  /** pipelined commits (see pipeline.ts; on etcd, EtcdBackend's chained transactions) */
  private readonly pipe = new Pipeline();
  /** large collections' Protobuf item bytes, encoded at the lowest priority between batches */
  readonly ahead = new EncodeAhead(() => this.caches.values());

  constructor(cfg: ActorConfig) {
    super(cfg);
    this.rv = new BigInt64Array(cfg.rvBuffer);
    configureProtobuf(cfg.apiDomain);
  }

  /** Loads every stored object of this shard into the caches, and the leases of kinds with a TTL. */
  async init(): Promise<InitReply> {
    this.backend = await createBackend(this.cfg);
    await this.backend.open();
    const floor = this.backend.revision();
    this.floor = floor;
    const namespaces: InitReply['namespaces'] = [];
    const objects: InitReply['objects'] = [];
    const stored = new Map<string, number>();
    for await (const page of this.backend.range(''))
      for (const { key, value } of page) {
        if (key.startsWith(LEASE_PREFIX)) {
          stored.set(key.slice(LEASE_PREFIX.length), Number(value));
          continue;
        }
        const slash = key.indexOf('/', key.indexOf('/') + 1);
        const typeKey = key.slice(0, slash);
        const store = this.storeForKey(typeKey);
        if (!store) continue;
        let obj: Stored; // a stored object (JSON.parse: what the store wrote)
        let entry: Entry;
        try {
          obj = JSON.parse(this.transformers.forType(typeKey).read(key, value));
          entry = store.entryOf(obj);
        } catch (e) {
          // kept out of the cache: reads answer 500 naming the key (see corrupt.ts)
          this.corrupt.add(key, (e as Error).message);
          continue;
        }
        store.ctx.cache.load(entry);
        objects.push(withQuota(cachedObject(typeKey, entry, obj.apiVersion ?? ''), () => obj));
        if (typeKey === '/namespaces')
          namespaces.push({ name: obj.metadata.name, terminating: !!obj.metadata.deletionTimestamp, obj });
      }
    for (const c of this.caches.values()) c.setFloor(floor);
    this.backend.follow?.((changes) => this.applyRemote(changes));
    return {
      maxRV: floor,
      namespaces,
      objects,
      leases: await loadLeases(this.backend, this.floor, stored, this.leased()),
    };
  }

  /**
   * Every cached object and the lease of each of a TTL kind, as init() reports them (a lease
   * never stored gets a full TTL from now, not stored here). On a shared store, after a sync.
   */
  async snapshot(): Promise<InitReply> {
    await this.backend.sync?.();
    const namespaces: InitReply['namespaces'] = [];
    const objects: InitReply['objects'] = [];
    const stored = await storedLeases(this.backend);
    const now = Date.now();
    for (const [typeKey, cache] of this.caches) {
      if (!this.storeForKey(typeKey)) continue;
      for (const [, e] of cache.scan('', undefined)) {
        objects.push(cachedObject(typeKey, e));
        if (typeKey === '/namespaces')
          namespaces.push({ name: e.name, terminating: !!e.obj.metadata.deletionTimestamp, obj: e.obj });
      }
    }
    const leases = [...this.leased()].map(
      ([typeKey, e, ttl]): Lease => ({
        typeKey,
        namespace: e.namespace,
        name: e.name,
        rv: e.rv,
        expiresAt: stored.get(leaseId(typeKey, e.namespace, e.name)) ?? now + ttl,
      }),
    );
    return { maxRV: Number(Atomics.load(this.rv, 0)), namespaces, objects, leases };
  }

  /** streams: the non-JSON encodings live watchers use per type key (their events come encoded) */
  async run(ops: Op[], streams?: Record<string, Encoding[]>, poll?: number): Promise<BatchReply> {
    if (poll !== undefined) return { results: [], events: await this.feed.waitForWork(poll, this.cfg.wakeBuffer) };
    // a poll still waiting (sent before this batch, answered before it) takes the changes so far
    this.feed.endPoll();
    // batches execute one at a time in arrival order; one that cannot overlap earlier commits (reads of a snapshot) first waits until every earlier batch is published
    const open = this.pipe.enter();
    const trace = startTrace(ops);
    let x: Executed;
    try {
      await open.turn;
      mark(trace, 'turn');
      if (!ops.every(overlaps)) await this.pipe.idle();
      // on a shared store, a read of the newest state first waits for every commit made before it
      if (this.backend.sync && ops.some(consistentRead)) {
        try {
          await this.backend.sync();
        } catch (e) {
          return { results: ops.map((op) => ({ id: op.id, error: unavailableStatus(e) })), events: this.feed.take() };
        }
      }
      // a commit queued in this turn reaches LMDB's writer only at the loop's next check phase:
      // executing first would hold it back by the whole execution (the writer idle meanwhile)
      const handover = this.backend.handedOver?.();
      if (handover) await handover;
      x = this.execute(ops);
      this.ahead.poke();
      x.trace = trace;
      mark(trace, 'executed');
    } finally {
      open.leave();
    }
    // commits and publications follow the execution order: this batch's transaction starts once the one before is written (its fsync may still run), its answer once that one is published
    const { before, wroteBefore, wrote, done } = this.pipe.join();
    try {
      await wroteBefore;
      mark(trace, 'prevWritten');
      // an earlier batch's staged writes, which this one may have read, were discarded: run again
      if (x.epoch !== this.pipe.epoch) {
        await before;
        return await this.atHead(ops, streams, 0);
      }
      return await this.settle(ops, streams, 0, x, before, wrote);
    } finally {
      this.pipe.drop(x.batch.pending);
      wrote();
      done();
      endTrace(trace, 'actor');
    }
  }

  /** Runs a task that changes or reads all of the shard with no batch in flight (Pipeline.exclusive). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.pipe.exclusive(task);
  }

  /** Runs the operations on a new batch over the committed state plus the in-flight batches' writes. */
  private execute(ops: Op[]): Executed {
    const batch = new Batch(this.rv, this.corrupt, this.pipe.inFlight.slice());
    const results: Result[] = ops.map((op) => batch.run((t) => this.exec(op, t)));
    const rawDeletes = this.rawDeletes;
    this.rawDeletes = [];
    if (batch.staged.length) this.pipe.inFlight.push(batch.pending);
    return { batch, results, rawDeletes, epoch: this.pipe.epoch };
  }

  /**
   * Runs operations again once every earlier batch is published (retries and fallbacks); the
   * batches executed since did not see these writes, so they run again too.
   */
  private async atHead(
    ops: Op[],
    streams: Record<string, Encoding[]> | undefined,
    attempt: number,
  ): Promise<BatchReply> {
    this.pipe.discard();
    const x = this.execute(ops);
    try {
      return await this.settle(ops, streams, attempt, x, Promise.resolve(), () => {});
    } finally {
      this.pipe.drop(x.batch.pending);
    }
  }

  /**
   * Commits an executed batch (every earlier one is written; wrote() once this one is), then,
   * once the batch before is published (before), publishes it.
   */
  private async settle(
    ops: Op[],
    streams: Record<string, Encoding[]> | undefined,
    attempt: number,
    { batch, results, rawDeletes, trace }: Executed,
    before: Promise<void>,
    wrote: () => void,
  ): Promise<BatchReply> {
    const { staged, txn } = batch;
    let failure: { e: unknown } | undefined;
    if (staged.length || rawDeletes.length) {
      try {
        await commitBatch(
          this.backend,
          this.transformers,
          staged,
          rawDeletes.length ? txn.nextRV() : 0,
          rawDeletes,
          this.cfg.testFaults?.failCommitMatch,
          trace
            ? () => {
                mark(trace, 'written');
                wrote();
              }
            : wrote,
        );
        mark(trace, 'flushed');
        for (const k of rawDeletes) this.corrupt.remove(k);
      } catch (e) {
        failure = { e };
        this.pipe.discard(batch.pending);
      }
    }
    wrote();
    await before;
    mark(trace, 'prevPublished');
    // skipped because a commit queued before it failed (it read that one's writes): run it again
    if (failure?.e instanceof EarlierCommitFailed) return this.atHead(ops, streams, attempt);
    if (failure) return this.failed(ops, streams, attempt, results, failure.e);
    if (!staged.length && !rawDeletes.length) return { results, events: this.feed.take() };
    const own = this.publish(staged, txn.now, streams);
    const remote = this.feed.take();
    return { results, events: remote.length ? [...remote, ...own] : own };
  }

  /** A batch whose commit failed (nothing of it stored; every earlier batch published). */
  private failed(
    ops: Op[],
    streams: Record<string, Encoding[]> | undefined,
    attempt: number,
    results: Result[],
    e: unknown,
  ): Promise<BatchReply> | BatchReply {
    // another server committed to this shard first; its changes are in the caches now
    if (e instanceof CommitConflict && attempt < MAX_CONFLICT_RETRIES) return this.atHead(ops, streams, attempt + 1);
    // nothing of the batch committed: run its operations again one by one, so one bad write (a value the backend refuses) fails alone and no read answers from a write that never was
    if (!(e instanceof StoreUnavailable || e instanceof CommitConflict) && ops.length > 1) return this.runEach(ops);
    const status =
      e instanceof StoreUnavailable || e instanceof CommitConflict
        ? unavailableStatus(e)
        : errors.internal(`storage commit failed: ${(e as Error).message}`).status;
    return {
      results: results.map((r, i) => (WRITES.has(ops[i]!.op) ? { id: r.id, error: status } : r)),
      events: this.feed.take(),
    };
  }

  /**
   * Other servers' commits to this shard (shared store), in commit order: applied to the
   * caches as local commits are, queued as change events for the next reply, and the global
   * counter raised so later local writes get higher versions.
   */
  private applyRemote(changes: RemoteChange[]): void {
    const now = Date.now();
    const byId = new Map<string, ChangeEvent>();
    let maxRV = 0;
    for (const c of changes) {
      maxRV = Math.max(maxRV, c.rv);
      if (c.key.startsWith(LEASE_PREFIX)) {
        const ev = byId.get(c.key.slice(LEASE_PREFIX.length));
        if (ev && c.value !== undefined) ev.expiresAt = Number(c.value);
        continue;
      }
      const w = remoteWrite(c, (t) => this.storeForKey(t), this.transformers, this.corrupt);
      if (!w) continue;
      maxRV = Math.max(maxRV, w.entry.rv);
      const ev = this.toEvent(w, now);
      byId.set(leaseId(w.typeKey, w.entry.namespace, w.entry.name), ev);
      this.feed.push(ev);
    }
    raiseRV(this.rv, maxRV);
    this.feed.arrived();
  }

  private async runEach(ops: Op[]): Promise<BatchReply> {
    const out: BatchReply = { results: [], events: this.feed.take() };
    for (const op of ops) {
      const r = await this.atHead([op], undefined, 0);
      // loops, not spreads: a deletecollection can produce more events than a call takes arguments
      for (const x of r.results) out.results.push(x);
      for (const e of r.events) out.events.push(e);
    }
    return out;
  }

  private exec(op: Op, txn: Txn): Result {
    const r = this.execOp(op, txn);
    // a streamed LIST's pages are compressed on the front, in one gzip stream
    if ('page' in r && r.page) return r;
    return op.enc.gzip && (op.op === 'get' || op.op === 'list') ? compress(r) : r;
  }

  private execOp(op: Op, txn: Txn): Result {
    try {
      const store = this.storeFor(op.type.group, op.type.version, op.type.resource);
      if (!store) throw errors.notFoundMessage('the server could not find the requested resource');
      const unsafe = this.corrupt.size ? this.corrupt.check(op, store.ctx.typeKey) : undefined;
      if (unsafe !== undefined && op.op === 'delete') {
        this.rawDeletes.push(unsafe);
        return unsafeDeleteReply(op);
      }
      switch (op.op) {
        case 'get':
          return { id: op.id, ...store.get(op, txn) };
        case 'list':
          return { id: op.id, ...store.list(op, txn) };
        case 'create':
          return { id: op.id, ...store.create(op, txn) };
        case 'update':
          return { id: op.id, ...store.update(op, txn) };
        case 'patch':
          return { id: op.id, ...store.patch(op, txn) };
        case 'delete':
          return { id: op.id, ...store.delete(op, txn) };
        case 'deletecollection':
          return { id: op.id, ...store.deleteCollection(op, txn) };
        case 'watch':
          return { id: op.id, watch: startWatch(store, op, txn) };
      }
    } catch (e) {
      return { id: op.id, error: toStatus(e) };
    }
  }

  /** Makes committed writes visible and turns them into events for the front thread. */
  private publish(staged: StagedWrite[], now: number, streams?: Record<string, Encoding[]>): ChangeEvent[] {
    return staged.map((w) => {
      const out = this.toEvent(w, now);
      const wanted = streams?.[w.typeKey];
      if (wanted?.length)
        out.encoded = encodeForStreams(this.storeForKey(w.typeKey)?.ctx.def.kind ?? '', w, wanted, now);
      if (TRACE_EVENTS) out.publishedUs = monoUs();
      return out;
    });
  }

  /** Applies one committed write to its type's cache and describes it for the front thread. */
  private toEvent(w: StagedWrite, now: number): ChangeEvent {
    return changeEvent(w, this.caches.get(w.typeKey)!.apply(w.type, w.entry, now));
  }

  ownsType(group: string, resource: string): boolean {
    return shardOf(typeKeyOf(group, resource), this.cfg.shards) === this.cfg.shard;
  }
}
