/**
 * Sends pre-encoded Txn bytes (txn-codec.ts) to etcd: the etcd3 client keeps choosing the
 * member, its circuit breakers and auth metadata (`withConnection` of its connection pool), and
 * the call itself is a gRPC unary call on our own HTTP/2 session to that member (h2-unary.ts),
 * not grpc-js's call stack. Recoverable failures are tried up to three times, as etcd3's own
 * calls, and retire the member's session as etcd3 resets its grpc clients of the host.
 *
 * Deadlines: a call is not given a grpc deadline (grpc-js armed timers for it in several of its
 * call layers, ~15-20% of a call's CPU in bench/etcd-txn.ts); one sweep of this caller's calls
 * in flight every SWEEP_MS cancels those past their time and fails them as etcd3 fails a call
 * past its deadline (GRPCDeadlineExceededError), so a commit still ends within its bound.
 */
import { castGrpcError, GRPCDeadlineExceededError, isRecoverableError, type Etcd3 } from 'etcd3';
import { H2Unary, grpcFrame, headersOf, tlsOf, type Metadata, type PoolOptions } from './h2-unary.js';
import { decodeTxnAnswer, type TxnAnswer } from './txn-codec.js';

const TXN_METHOD = '/etcdserverpb.KV/Txn';
const ATTEMPTS = 3;
/** how often calls in flight are checked against their deadline */
export const SWEEP_MS = 250;

/** a call in flight: when it must have answered, and how it fails then */
interface Pending {
  deadline: number;
  expire: () => void;
}

/** what a member is to etcd3's pool (etcd3 1.x `Host`): `host:port`, scheme removed */
interface Member {
  host: string;
}

/** what etcd3's KVClient holds: its connection pool (etcd3 1.x `ConnectionPool`) */
interface Pool {
  withConnection<R>(service: 'KV', fn: (args: { resource: Member; metadata: Metadata }) => Promise<R>): Promise<R>;
  options: PoolOptions;
}

function poolOf(client: Etcd3): Pool {
  const pool = (client.kv as unknown as { client?: Partial<Pool> }).client;
  if (typeof pool?.withConnection !== 'function' || !pool.options)
    throw new Error('etcd3: KV client has no connection pool');
  return pool as Pool;
}

/** A Txn call with bytes already encoded; answers etcd3's error classes on failure. */
export class TxnCaller {
  private readonly pool: Pool;
  private readonly h2: H2Unary;
  private readonly pending = new Set<Pending>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(client: Etcd3) {
    this.pool = poolOf(client);
    this.h2 = new H2Unary(tlsOf(this.pool.options));
  }

  async txn(bytes: Buffer, timeoutMs: number): Promise<TxnAnswer> {
    const frame = grpcFrame(bytes);
    for (let attempt = 1; ; attempt++) {
      let member: string | undefined;
      try {
        return await this.pool.withConnection('KV', ({ resource, metadata }) => {
          member = resource.host;
          return this.once(resource.host, frame, headersOf(metadata), timeoutMs);
        });
      } catch (e) {
        const err = castGrpcError(e instanceof Error ? e : new Error(String(e)));
        if (member !== undefined && isRecoverableError(err)) this.h2.retire(member);
        if (attempt >= ATTEMPTS || !isRecoverableError(err)) throw err;
      }
    }
  }

  /** Ends the sessions (the etcd3 client's own are closed by its close()). */
  close(): void {
    this.h2.close();
  }

  private once(host: string, frame: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<TxnAnswer> {
    const call = this.h2.call(host, TXN_METHOD, frame, headers, decodeTxnAnswer);
    return new Promise((resolve, reject) => {
      const p: Pending = {
        deadline: Date.now() + timeoutMs,
        expire: () => {
          call.cancel();
          reject(new GRPCDeadlineExceededError(`Deadline exceeded: no answer to the Txn within ${timeoutMs} ms`));
        },
      };
      this.track(p);
      call.answer.then(
        (value) => {
          this.settle(p);
          resolve(value);
        },
        (err: Error) => {
          this.settle(p);
          reject(err);
        },
      );
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
