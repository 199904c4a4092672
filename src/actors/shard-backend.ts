/**
 * What a shard actor is built on: its storage backend (chosen by the configuration) and the
 * operation kinds its batches treat apart.
 */
import { join } from 'node:path';
import type { ActorConfig, Op } from './protocol.js';
import type { Backend } from '../storage/interface.js';
import { LmdbBackend } from '../storage/lmdb/lmdb-backend.js';

/** The shard's backend; the etcd client (gRPC, ~300 ms to load) is imported only when chosen. */
export async function createBackend(cfg: ActorConfig): Promise<Backend> {
  const space = `shard-${cfg.shard}-of-${cfg.shards}`;
  if (cfg.storageBackend !== 'etcd3') return new LmdbBackend(join(cfg.dataDir, space));
  const { EtcdBackend } = await import('../storage/etcd/etcd-backend.js');
  // shard 0 alone runs the periodic compaction of this server; commits pipeline as LMDB's do
  return new EtcdBackend(cfg.etcd, space, { compact: cfg.shard === 0, pipeline: true });
}

export const WRITES = new Set<Op['op']>(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Operations that may execute while earlier batches' commits are in flight: they read single
 * objects through the batch (which sees those writes) or committed state (GET), and answer only
 * after the earlier commits. LISTs, watches and collection deletes read a snapshot at the
 * current revision, so they wait for every earlier batch to be published.
 */
const OVERLAPS = new Set<Op['op']>(['create', 'update', 'patch', 'delete', 'get']);
export function overlaps(op: Op): boolean {
  return OVERLAPS.has(op.op);
}
