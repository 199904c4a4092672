/**
 * Sends pre-encoded Txn bytes (txn-codec.ts) on the etcd3 client's own connections: the client
 * keeps choosing the member, its circuit breakers and auth metadata (`withConnection`), and
 * only the message codec is ours, through grpc-js's `makeUnaryRequest` on the KV service
 * client it hands out. Recoverable failures are tried up to three times, as etcd3's own calls.
 *
 * Deadlines: a call is not given a grpc deadline (grpc-js arms timers for it in several of its
 * call layers, ~15-20% of a call's CPU in bench/etcd-txn.ts); one sweep of this caller's calls
 * in flight every SWEEP_MS cancels those past their time and fails them as etcd3 fails a call
 * past its deadline (GRPCDeadlineExceededError), so a commit still ends within its bound.
 */
import { castGrpcError, GRPCDeadlineExceededError, isRecoverableError, type Etcd3 } from 'etcd3';
import { decodeTxnAnswer, type TxnAnswer } from './txn-codec.js';

const TXN_METHOD = '/etcdserverpb.KV/Txn';
const ATTEMPTS = 3;
/** how often calls in flight are checked against their deadline */
export const SWEEP_MS = 250;

interface UnaryClient {
  makeUnaryRequest(
    method: string,
    serialize: (b: Buffer) => Buffer,
    deserialize: (b: Buffer) => TxnAnswer,
    argument: Buffer,
    metadata: unknown,
    options: object,
    callback: (err: Error | null, value?: TxnAnswer) => void,
  ): { cancel(): void };
}

/** a call in flight: when it must have answered, and how it fails then */
interface Pending {
  deadline: number;
  expire: () => void;
  /** answered (a grpc callback may in principle run before makeUnaryRequest returns) */
  done: boolean;
}

/** what etcd3's KVClient holds: its connection pool (etcd3 1.x, `ICallable`) */
interface Pool {
  withConnection<R>(service: 'KV', fn: (args: { client: unknown; metadata: unknown }) => Promise<R>): Promise<R>;
}

const identity = (b: Buffer): Buffer => b;

function poolOf(client: Etcd3): Pool {
  const pool = (client.kv as unknown as { client?: Partial<Pool> }).client;
  if (typeof pool?.withConnection !== 'function') throw new Error('etcd3: KV client has no connection pool');
  return pool as Pool;
}

function isUnary(c: unknown): c is UnaryClient {
  return typeof (c as Partial<UnaryClient> | null)?.makeUnaryRequest === 'function';
}

/** A Txn call with bytes already encoded; answers etcd3's error classes on failure. */
export class TxnCaller {
  private readonly pool: Pool;
  private readonly pending = new Set<Pending>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(client: Etcd3) {
    this.pool = poolOf(client);
  }

  async txn(bytes: Buffer, timeoutMs: number): Promise<TxnAnswer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.withConnection('KV', ({ client, metadata }) =>
          this.once(client, bytes, metadata, timeoutMs),
        );
      } catch (e) {
        const err = castGrpcError(e instanceof Error ? e : new Error(String(e)));
        if (attempt >= ATTEMPTS || !isRecoverableError(err)) throw err;
      }
    }
  }

  private once(client: unknown, bytes: Buffer, metadata: unknown, timeoutMs: number): Promise<TxnAnswer> {
    if (!isUnary(client)) return Promise.reject(new Error('etcd3: KV service client is not a grpc client'));
    return new Promise((resolve, reject) => {
      const p: Pending = {
        done: false,
        deadline: Date.now() + timeoutMs,
        expire: () => {
          call.cancel();
          reject(new GRPCDeadlineExceededError(`Deadline exceeded: no answer to the Txn within ${timeoutMs} ms`));
        },
      };
      const call = client.makeUnaryRequest(TXN_METHOD, identity, decodeTxnAnswer, bytes, metadata, {}, (err, value) => {
        p.done = true;
        this.settle(p);
        if (err) reject(castGrpcError(err));
        else resolve(value!);
      });
      if (!p.done) this.track(p);
    });
  }

  private track(p: Pending): void {
    this.pending.add(p);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  private settle(p: Pending): void {
    this.pending.delete(p);
    if (this.pending.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Fails the calls past their deadline (their late answers are then ignored). */
  private sweep(): void {
    const now = Date.now();
    for (const p of [...this.pending])
      if (p.deadline <= now) {
        this.settle(p);
        p.expire();
      }
  }
}
