/**
 * A shard actor in process (no worker thread, no HTTP) on a fresh LMDB directory, configured as
 * the server's defaults configure it: for store and actor scenario tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import type { ActorConfig, Op, Result } from '../../src/actors/protocol.js';
import { DEFAULT_OPTIONS } from '../../src/server/options.js';
import { actorPoolConfig } from '../../src/server/server-parts.js';
import { makeIdentity } from '../../src/api/identity.js';

export interface LocalShard {
  shard: Shard;
  /** runs one op in a batch of its own and answers its result */
  one(op: Op): Promise<Result>;
  close(): void;
}

/** Shard 0 of 1 on LMDB in `dataDir`, configured as the server's defaults configure its actors. */
export function shardConfig(dataDir: string, rvBuffer = new SharedArrayBuffer(8)): ActorConfig {
  const o = { ...DEFAULT_OPTIONS, dataDir, shards: 1, storageBackend: 'lmdb' as const };
  return { ...actorPoolConfig(o, makeIdentity(o.apiDomain)), shard: 0, rvBuffer };
}

export async function openShard(prefix: string, testFaults?: { failCommitMatch: string }): Promise<LocalShard> {
  const dir = mkdtempSync(join(tmpdir(), `plat-${prefix}-`));
  const shard = new Shard({ ...shardConfig(dir), ...(testFaults ? { testFaults } : {}) });
  await shard.init();
  return {
    shard,
    one: async (op) => {
      const reply = await shard.run([op]);
      const r = reply.results[0];
      if (!r) throw new Error('no result');
      return r;
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
