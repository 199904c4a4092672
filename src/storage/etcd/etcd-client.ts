/**
 * Connection settings of the etcd backend (plain data: they cross into the shard actors) and
 * the one place an etcd3 client is built from them.
 */
import { readFileSync } from 'node:fs';
import { Etcd3, GRPCDeadlineExceededError, isRecoverableError, type IOptions } from 'etcd3';
import { StoreUnavailable } from '../interface.js';
import { useWatchCodec } from './watch-codec.js';

export interface EtcdConfig {
  /** client URLs, http:// or https:// */
  servers: string[];
  /** every key this server writes starts with prefix + '/' */
  prefix: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** period of etcd compaction; 0 disables it */
  compactionIntervalMs: number;
}

/** A unary call (range, txn, compact) fails after this long instead of hanging forever. */
export const CALL_TIMEOUT_MS = 15_000;
/**
 * Raised from grpc's 4 MiB default: a range page of PAGE_KEYS large objects can exceed it, and
 * a failed receive counts against the client's circuit breaker, blocking the calls after it.
 */
const MAX_RECEIVE_BYTES = 256 * 1024 * 1024;

export function createClient(cfg: EtcdConfig): Etcd3 {
  const options: IOptions = {
    hosts: cfg.servers,
    grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_TIMEOUT_MS }),
  };
  if (cfg.caFile || cfg.certFile || cfg.keyFile) {
    // grpc uses the system roots when rootCertificate is null.
    options.credentials = {
      rootCertificate: (cfg.caFile ? readFileSync(cfg.caFile) : null) as Buffer,
      certChain: cfg.certFile ? readFileSync(cfg.certFile) : undefined,
      privateKey: cfg.keyFile ? readFileSync(cfg.keyFile) : undefined,
    };
  }
  const client = new Etcd3(options);
  // the follower's watch gets every event of this server's own commits back: decode them cheaply
  useWatchCodec(client);
  return client;
}

/**
 * An etcd client error as the API answers it: unreachable members, an open circuit breaker or
 * a closed client are StoreUnavailable (503), a passed deadline a timeout (504); anything else
 * (a refused request, e.g. too large) is returned as it is.
 */
export function classify(e: unknown, servers: string): Error {
  const err = e instanceof Error ? e : new Error(String(e));
  if (err instanceof StoreUnavailable) return err;
  const what = `etcd at ${servers}: ${err.message}`;
  if (err instanceof GRPCDeadlineExceededError || /deadline exceeded|timed out/i.test(err.message))
    return new StoreUnavailable(what, true);
  if (
    isRecoverableError(err) ||
    err.name === 'BrokenCircuitError' ||
    err.name === 'ClientClosedError' ||
    /unavailable|ECONNREFUSED|circuit/i.test(err.message)
  )
    return new StoreUnavailable(what, false);
  return err;
}
