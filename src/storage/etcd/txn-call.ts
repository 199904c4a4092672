/**
 * Sends pre-encoded Txn bytes (txn-codec.ts) on the etcd3 client's own connections: the client
 * keeps choosing the member, its circuit breakers and auth metadata (`withConnection`), and
 * only the message codec is ours, through grpc-js's `makeUnaryRequest` on the KV service
 * client it hands out. Recoverable failures are tried up to three times, as etcd3's own calls.
 */
import { castGrpcError, isRecoverableError, type Etcd3 } from 'etcd3';
import { decodeTxnAnswer, type TxnAnswer } from './txn-codec.js';

const TXN_METHOD = '/etcdserverpb.KV/Txn';
const ATTEMPTS = 3;

interface UnaryClient {
  makeUnaryRequest(
    method: string,
    serialize: (b: Buffer) => Buffer,
    deserialize: (b: Buffer) => TxnAnswer,
    argument: Buffer,
    metadata: unknown,
    options: { deadline: number },
    callback: (err: Error | null, value?: TxnAnswer) => void,
  ): unknown;
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

  constructor(client: Etcd3) {
    this.pool = poolOf(client);
  }

  async txn(bytes: Buffer, timeoutMs: number): Promise<TxnAnswer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.withConnection('KV', ({ client, metadata }) => once(client, bytes, metadata, timeoutMs));
      } catch (e) {
        const err = castGrpcError(e instanceof Error ? e : new Error(String(e)));
        if (attempt >= ATTEMPTS || !isRecoverableError(err)) throw err;
      }
    }
  }
}

function once(client: unknown, bytes: Buffer, metadata: unknown, timeoutMs: number): Promise<TxnAnswer> {
  if (!isUnary(client)) return Promise.reject(new Error('etcd3: KV service client is not a grpc client'));
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      TXN_METHOD,
      identity,
      decodeTxnAnswer,
      bytes,
      metadata,
      { deadline: Date.now() + timeoutMs },
      (err, value) => (err ? reject(castGrpcError(err)) : resolve(value!)),
    );
  });
}
