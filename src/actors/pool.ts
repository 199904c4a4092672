/**
 * Front-thread side of the shard actors: one single-thread piscina per shard, and a per-shard
 * queue flushed once per event-loop turn as one task carrying the whole batch (per-task
 * overhead dominates single-operation round trips). A shard's single worker runs its tasks one
 * after another, so replies, and with them the change events, arrive in commit order even
 * with a few batches in flight; pipelining them keeps the worker busy while the front thread
 * writes the previous replies.
 *
 * A shard's worker that dies (out of memory, a crash) is a real event: piscina starts a new
 * thread, which knows nothing yet; the pool fails only the batch the dead one held (500), keeps
 * the shard's queue, loads the shard again from its store (init, then the custom types), and
 * only then sends the queue on. Until then `restarting()` names the shard (/readyz fails).
 */
import { Piscina } from 'piscina';
import { fileURLToPath } from 'node:url';
import type {
  ActorConfig,
  Batch,
  BatchReply,
  CachedObject,
  ChangeEvent,
  CollectRequest,
  DefsReply,
  DefsRequest,
  Encoding,
  InitReply,
  Op,
  Result,
} from './protocol.js';
import type { CustomType } from '../registry/crd/types.js';
import { shardOf, typeKeyOf } from './routing.js';
import { takeReturned, unpackBodies } from './pack.js';
import { packOps } from './wire-ops.js';
import { unpackReply } from './wire-reply.js';
import { HEAVY_PER_BATCH, takeBatch, type Pending } from './take-batch.js';
import { IdleCollector } from './idle-collect.js';
import type { CollectReply } from './young-collect.js';
import { endTrace, mark, sampleThreads, startTrace } from './write-trace.js';

export { takeBatch, type Pending };
export type OpInput = Op extends infer T ? (T extends Op ? Omit<T, 'id'> : never) : never;

interface ShardQueue {
  pool: Piscina;
  queue: Pending[];
  /** global resourceVersion read just before each in-flight batch was sent, oldest first */
  inFlight: number[];
  scheduled: boolean;
  /** wake counter shared with the actor, bumped when work queues behind a poll */
  wake: Int32Array;
  polling: boolean;
  /** highest resourceVersion of this shard's events delivered so far (shared stores) */
  delivered: number;
  index: number;
  /** settles once the latest batch sent has been handled (its events and results): replies are handled in send order */
  handled: Promise<void>;
  /** the worker died and a new one is loading the shard: nothing is sent to it until then */
  restarting: boolean;
  /** why the last worker stopped (for the 500s of the batch it held) */
  lostReason?: string;
  /** settles once a restarting shard serves again (tasks other than batches wait for it) */
  back?: Promise<void>;
  /** asks the actor to collect its young generation once the shard idles after a burst */
  collector: IdleCollector<CollectReply>;
}

/** Front-thread scheduling knobs (hidden flags, for benchmarking). */
export interface PoolTuning {
  /** batches in flight per shard (--actor-pipeline-depth; default 2) */
  pipelineDepth?: number;
  /** heavy ops per batch (--actor-heavy-per-batch; default 4, see takeBatch) */
  heavyPerBatch?: number;
}

export class ActorPool {
  private readonly shards: ShardQueue[] = [];
  private nextId = 1;
  readonly rvBuffer = new SharedArrayBuffer(8);
  /** the stream encodings live watchers use per type key, sent with every batch (see Batch.streams) */
  streams: () => Record<string, Encoding[]> | undefined = () => undefined;
  /**
   * On a shared store (etcd) other servers write too: each shard keeps an empty "poll" batch
   * in flight while idle, answered with their changes as the actor's etcd watch delivers them.
   */
  private readonly follow: boolean;
  readonly etcdConfig: ActorConfig['etcd'];
  private closed = false;
  /** the custom types last sent (a restarted actor gets them again) */
  private defs: CustomType[] | undefined;
  /** restarts of dead actors so far (all shards) */
  restarts = 0;

  private readonly pipelineDepth: number;
  private readonly heavyPerBatch: number;

  /** onEvents runs for each batch's committed changes before that batch's results resolve. */
  constructor(
    cfg: Omit<ActorConfig, 'shard' | 'rvBuffer'>,
    private readonly onEvents: (evs: ChangeEvent[]) => void,
    tuning: PoolTuning = {},
  ) {
    this.follow = cfg.storageBackend === 'etcd3';
    sampleThreads();
    // the actor executes a batch while the one before commits (Shard.run; on etcd its
    // transaction is sent before the one before answers), so a second batch in flight keeps it
    // busy; on etcd the idle poll takes a slot while no batch is in flight, and a second batch
    // goes out only once enough ops wait (sendsBeside)
    this.pipelineDepth = tuning.pipelineDepth ?? 2;
    this.heavyPerBatch = tuning.heavyPerBatch ?? HEAVY_PER_BATCH;
    const filename = fileURLToPath(new URL('../../workers/shard-actor.js', import.meta.url));
    this.etcdConfig = cfg.etcd;
    for (let shard = 0; shard < cfg.shards; shard++) {
      const wakeBuffer = new SharedArrayBuffer(4);
      const workerData: ActorConfig = { ...cfg, shard, rvBuffer: this.rvBuffer, wakeBuffer };
      const pool = new Piscina({
        filename,
        minThreads: 1,
        maxThreads: 1,
        // the actor orders the batches it holds itself (Shard.run)
        concurrentTasksPerWorker: this.pipelineDepth,
        idleTimeout: Infinity,
        workerData,
      });
      const s: ShardQueue = {
        pool,
        queue: [],
        inFlight: [],
        scheduled: false,
        wake: new Int32Array(wakeBuffer),
        polling: false,
        delivered: 0,
        index: shard,
        restarting: false,
        handled: Promise.resolve(),
        collector: new IdleCollector(() => this.task(s, { collect: true }) as Promise<CollectReply>),
      };
      // emitted before the dead worker's task fails: the batch's failure sees `restarting`
      pool.on('workerDestroy', () => this.lost(s));
      // a worker error with no task in flight (the worker is gone as well): never the process's end
      pool.on('error', (e: Error) => {
        s.lostReason = e.message;
      });
      this.shards.push(s);
    }
  }

  /** A shard's idle collections (tests, diagnostics). */
  idleCollector(shard: number): IdleCollector<CollectReply> | undefined {
    return this.shards[shard]?.collector;
  }

  /** Shards whose actor is being restarted (empty when all serve). */
  restarting(): number[] {
    return this.shards.filter((s) => s.restarting).map((s) => s.index);
  }

  /** A shard's worker is gone (not by close): load the shard again in its replacement. */
  private lost(s: ShardQueue): void {
    if (this.closed || s.restarting) return;
    s.restarting = true;
    process.stderr.write(
      `warning: shard actor ${s.index} stopped${s.lostReason ? ` (${s.lostReason})` : ''}; restarting it from its store\n`,
    );
    s.back = this.restart(s);
  }

  /** Runs a non-batch task (defs, snapshot) once the shard serves. */
  private async task(s: ShardQueue, t: DefsRequest | { snapshot: true } | CollectRequest): Promise<unknown> {
    if (s.restarting) await s.back;
    // a shard idling in its etcd poll takes the task once woken
    if (s.polling) this.wakeUp(s);
    return s.pool.run(t);
  }

  private async restart(s: ShardQueue): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        const init = (await s.pool.run({ init: true })) as InitReply;
        if (init.maxRV > s.delivered) s.delivered = init.maxRV;
        if (this.defs) await s.pool.run({ defs: this.defs } satisfies DefsRequest);
        s.restarting = false;
        s.lostReason = undefined;
        this.restarts++;
        process.stderr.write(`shard actor ${s.index} restarted\n`);
        this.schedule(s);
        return;
      } catch (e) {
        // the replacement failed too (its store unavailable): try again, backing off to 5 s
        process.stderr.write(`warning: restarting shard actor ${s.index}: ${(e as Error).message}\n`);
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5_000)));
      }
    }
  }

  /** Loads every shard; sets the global resourceVersion to the highest committed one. */
  async init(): Promise<InitReply> {
    const replies = (await Promise.all(this.shards.map((s) => s.pool.run({ init: true })))) as InitReply[];
    const maxRV = Math.max(0, ...replies.map((r) => r.maxRV));
    Atomics.store(new BigInt64Array(this.rvBuffer), 0, BigInt(maxRV));
    this.shards.forEach((s, i) => {
      s.delivered = replies[i]!.maxRV;
    });
    if (this.follow) for (const s of this.shards) this.schedule(s);
    return {
      maxRV,
      namespaces: replies.flatMap((r) => r.namespaces),
      objects: replies.flatMap((r) => r.objects),
      leases: replies.flatMap((r) => r.leases),
    };
  }

  /**
   * Sends the served custom resource types to every actor (queued behind the batches already
   * sent, ahead of later ones); resolves with the objects the actors loaded for new types.
   */
  async setDefs(defs: CustomType[]): Promise<CachedObject[]> {
    this.defs = defs;
    const replies = (await Promise.all(this.shards.map((s) => this.task(s, { defs })))) as DefsReply[];
    return replies.flatMap((r) => r.objects);
  }

  /** Every object and lease now, from every shard (a newly elected leader's controllers load it). */
  async snapshot(): Promise<InitReply> {
    const replies = (await Promise.all(this.shards.map((s) => this.task(s, { snapshot: true })))) as InitReply[];
    return {
      maxRV: this.currentRV(),
      namespaces: replies.flatMap((r) => r.namespaces),
      objects: replies.flatMap((r) => r.objects),
      leases: replies.flatMap((r) => r.leases),
    };
  }

  currentRV(): number {
    return Number(Atomics.load(new BigInt64Array(this.rvBuffer), 0));
  }

  /**
   * A version at or below which every change of the shard has reached the front thread:
   * an in-flight batch only allocates versions above what the counter held when it was sent.
   */
  safeRV(shard: number): number {
    const s = this.shards[shard]!;
    // another server's change may carry a version below our counter until it arrives
    if (this.follow) return s.delivered;
    return s.inFlight.length ? s.inFlight[0]! : this.currentRV();
  }

  submit(input: OpInput): Promise<Result> {
    // not `{ ...input, id }`: a spread followed by a property takes V8's slow clone path (~2 µs, see writeOp)
    const op = Object.assign({ id: this.nextId++ }, input) as Op;
    const s = this.shards[shardOf(typeKeyOf(op.type.group, op.type.resource), this.shards.length)]!;
    return new Promise((resolve) => {
      s.queue.push({ op, resolve });
      if (s.polling) this.wakeUp(s);
      this.schedule(s);
    });
  }

  private schedule(s: ShardQueue): void {
    if (s.scheduled || s.restarting || s.inFlight.length >= this.pipelineDepth) return;
    s.scheduled = true;
    setImmediate(() => this.flush(s));
  }

  private wakeUp(s: ShardQueue): void {
    Atomics.add(s.wake, 0, 1);
    Atomics.notify(s.wake, 0);
  }

  private async flush(s: ShardQueue): Promise<void> {
    s.scheduled = false;
    if (s.restarting || s.inFlight.length >= this.pipelineDepth) return;
    if (this.follow && !sendsBeside(s)) return;
    const poll = s.queue.length === 0;
    if (poll && (!this.follow || s.inFlight.length || this.closed)) return;
    const batch = takeBatch(s, this.heavyPerBatch);
    s.collector.busy(batch.length);
    const trace = startTrace(batch.map((p) => p.op));
    if (trace) trace.n.inFlight = s.inFlight.length;
    s.inFlight.push(this.currentRV());
    const before = s.handled;
    let handled!: () => void;
    s.handled = new Promise((r) => (handled = r));
    try {
      const task: Batch = { ops: [], wire: packOps(batch.map((p) => p.op)) };
      if (poll) {
        task.poll = Atomics.load(s.wake, 0);
        s.polling = true;
      }
      const streams = this.streams();
      if (streams) task.streams = streams;
      // large bodies' buffers the front wrote go back for reuse (codec/buffer-pool.ts)
      const returned = takeReturned();
      if (returned) task.returned = returned;
      // piscina passes transferList to postMessage, which takes an array (its type infers the options overload)
      const transfer = returned
        ? { transferList: returned as unknown as NonNullable<Parameters<Piscina['run']>[1]>['transferList'] }
        : undefined;
      mark(trace, 'sent');
      const reply = (await s.pool.run(task, transfer)) as BatchReply;
      mark(trace, 'replied');
      // the batch sent before is handled first: its events come before this one's
      await before;
      unpackReply(reply);
      unpackBodies(reply);
      if (reply.events.length) {
        for (const ev of reply.events) if (ev.rv > s.delivered) s.delivered = ev.rv;
        this.onEvents(reply.events);
      }
      batch.forEach((p, i) => p.resolve(reply.results[i] ?? internal(p.op.id, 'no result from actor')));
      endTrace(trace, 'front');
    } catch (e) {
      await before;
      const why = s.restarting
        ? `shard actor ${s.index} stopped (${(e as Error).message}); it is being restarted`
        : (e as Error).message;
      for (const p of batch) p.resolve(internal(p.op.id, why));
      // a failed poll (pool closing) is not retried in a tight loop
      if (poll) await new Promise((r) => setTimeout(r, 100));
    } finally {
      handled();
      s.inFlight.shift();
      if (poll) s.polling = false;
      if (s.queue.length || this.follow) this.schedule(s);
      else if (!s.inFlight.length && !this.closed) s.collector.idle();
    }
  }

  /** Resolves once every actor has loaded its modules (a collect task each), or after limitMs. */
  async loaded(limitMs: number): Promise<void> {
    await within(Promise.allSettled(this.shards.map((s) => s.pool.run({ collect: true }))), limitMs);
  }

  /**
   * Stops the actors once what they were handed is answered: the batches in flight and the ops
   * queued (keep-alive connections may still send during the drain) run to their replies, so a
   * write in flight is committed and acknowledged rather than cut off with a 500 when its thread
   * is terminated. Bounded by CLOSE_DRAIN_MS; a shard restarting its actor is not waited for.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.shards) {
      s.collector.stop();
      this.wakeUp(s);
    }
    const drained = { stop: false };
    await within(this.drained(drained), CLOSE_DRAIN_MS);
    drained.stop = true;
    await Promise.all(this.shards.map((s) => s.pool.destroy()));
  }

  private async drained(until: { stop: boolean }): Promise<void> {
    for (const s of this.shards)
      while (!until.stop && !s.restarting && (s.queue.length || s.inFlight.length))
        await (s.inFlight.length ? s.handled : new Promise((r) => setImmediate(r)));
  }
}

/** Settles when `p` does or after `ms`, whichever is first (the timer is cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((r) => {
    timer = setTimeout(r, ms);
  });
  await Promise.race([p, limit]);
  clearTimeout(timer);
}

/** how long close() waits for the batches in flight and queued before it stops the actors */
export const CLOSE_DRAIN_MS = 30_000;

/** ops queued before a second batch goes out beside one in flight on etcd (sendsBeside) */
export const PIPELINE_MIN_OPS = 16;

/**
 * Whether a shard on etcd sends its queue now: always when nothing but an idle poll is in
 * flight; beside a batch in flight only once PIPELINE_MIN_OPS ops wait. Each batch is an etcd
 * transaction of its own, and on a busy machine the etcd and client CPU per transaction costs
 * more than the round trip a second transaction saves (bench/etcd.ts: 32 writers, 60% of raw
 * etcd puts with every batch sent at once, 62-98% with one batch at a time or this threshold).
 */
export function sendsBeside(s: Pick<ShardQueue, 'inFlight' | 'polling' | 'queue'>): boolean {
  return s.inFlight.length === 0 || s.polling || s.queue.length >= PIPELINE_MIN_OPS;
}

function internal(id: number, message: string): Result {
  return {
    id,
    error: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Internal error occurred: ${message}`,
      reason: 'InternalError',
      code: 500,
    },
  };
}
