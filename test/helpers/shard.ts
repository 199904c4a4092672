/**
 * A shard actor in process (no worker thread, no HTTP) on a fresh LMDB directory, configured as
 * the server's defaults configure it: for store and actor scenario tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import type { Op, Result } from '../../src/actors/protocol.js';
import { DEFAULT_OPTIONS } from '../../src/server/options.js';
import { makeIdentity, protectedNamespaces } from '../../src/api/identity.js';

export interface LocalShard {
  shard: Shard;
  /** runs one op in a batch of its own and answers its result */
  one(op: Op): Promise<Result>;
  close(): void;
}

export async function openShard(prefix: string, testFaults?: { failCommitMatch: string }): Promise<LocalShard> {
  const dir = mkdtempSync(join(tmpdir(), `plat-${prefix}-`));
  const o = DEFAULT_OPTIONS;
  const identity = makeIdentity(o.apiDomain);
  const shard = new Shard({
    shard: 0,
    shards: 1,
    storageBackend: 'lmdb',
    dataDir: dir,
    etcd: { servers: [], prefix: '', compactionIntervalMs: 0 },
    runtimeConfig: o.runtimeConfig,
    apiDomain: o.apiDomain,
    rvBuffer: new SharedArrayBuffer(8),
    historyWindowMs: o.watchHistoryWindowMs,
    continueTtlMs: o.continueTtlMs,
    strategyConfig: {
      serviceClusterIPRange: o.serviceClusterIPRange,
      serviceNodePortRange: o.serviceNodePortRange,
      apiServiceName: identity.product,
      eventTtlMs: o.eventTtlMs,
      labelDomain: `${identity.product}.io`,
      protectedNamespaces: protectedNamespaces(identity),
      apiDomain: identity.domain,
    },
    ...(testFaults ? { testFaults } : {}),
  });
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
