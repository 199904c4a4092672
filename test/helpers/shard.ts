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
import { actorPoolConfig } from '../../src/server/shards.js';
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

let nextOpId = 1;
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const JSON_ENC = { format: 'json', pretty: false } as const;

/** Ops on ConfigMaps in compact JSON, each with an id of its own: create (data.k = name), get, merge patch (data.k = patched), list. */
export const configMapOps = {
  create: (name: string, namespace = 'default'): Op => ({
    id: nextOpId++,
    op: 'create',
    type: CONFIGMAPS,
    enc: JSON_ENC,
    dryRun: false,
    namespace,
    body: {
      text: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: name } }),
      contentType: 'json',
    },
  }),
  get: (name: string, namespace = 'default'): Op => ({
    id: nextOpId++,
    op: 'get',
    type: CONFIGMAPS,
    enc: JSON_ENC,
    namespace,
    name,
  }),
  patch: (name: string, namespace = 'default'): Op => ({
    id: nextOpId++,
    op: 'patch',
    type: CONFIGMAPS,
    enc: JSON_ENC,
    dryRun: false,
    namespace,
    name,
    patchType: 'merge',
    text: '{"data":{"k":"patched"}}',
    force: false,
  }),
  list: (namespace = 'default'): Op => ({
    id: nextOpId++,
    op: 'list',
    type: CONFIGMAPS,
    enc: JSON_ENC,
    namespace,
    opts: {},
  }),
};
