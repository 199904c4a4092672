/**
 * `platform-apiserver migrate-to-etcd --data-dir DIR --etcd-servers URLS [--etcd-prefix P]`:
 * copies a stopped LMDB data directory into etcd, shard by shard, keys and values verbatim
 * (objects keep their uid, resourceVersion and encryption), each etcd key space getting the
 * shard's revision, then counts the keys on both sides. The target prefix must be empty. The
 * identity file then names etcd3, so the directory serves on etcd with the same --shards
 * and --api-domain (docs/operations.md).
 */
import { join } from 'node:path';
import { open } from 'lmdb';
import { storeOptions } from '../storage/lmdb/store-options.js';
import type { Write } from '../storage/interface.js';
import { IDENTITY_FILE, writeIdentity, type DataDirIdentity } from './data-dir.js';
import { readFileSync } from 'node:fs';

const REVISION_KEY = '\u0000meta/revision';
const BATCH = 500;

export interface MigrateArgs {
  dataDir: string;
  servers: string[];
  prefix: string;
}

export function parseMigrateArgs(argv: string[]): MigrateArgs {
  const a: MigrateArgs = { dataDir: './data', servers: [], prefix: '/registry' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--data-dir') a.dataDir = value;
    else if (flag === '--etcd-servers') a.servers = value.split(',');
    else if (flag === '--etcd-prefix') a.prefix = value.replace(/\/+$/, '');
    else
      throw new Error(
        `migrate-to-etcd: unknown flag ${flag} (usage: platform-apiserver migrate-to-etcd --data-dir DIR --etcd-servers URLS [--etcd-prefix /registry])`,
      );
  }
  if (a.servers.length === 0) throw new Error('migrate-to-etcd: --etcd-servers is required');
  return a;
}

export async function migrateToEtcd(a: MigrateArgs): Promise<{ shards: number; keys: number }> {
  const identity = JSON.parse(readFileSync(join(a.dataDir, IDENTITY_FILE), 'utf8')) as DataDirIdentity;
  if (identity.storageBackend !== 'lmdb')
    throw new Error(`--data-dir ${a.dataDir}: already on ${identity.storageBackend}`);
  const { EtcdBackend } = await import('../storage/etcd/etcd-backend.js');
  let total = 0;
  for (let i = 0; i < identity.shards; i++) {
    const space = `shard-${i}-of-${identity.shards}`;
    // the server must be stopped: a write after the copy would stay behind in LMDB
    const db = open<string, string>({ ...storeOptions(join(a.dataDir, space)), readOnly: true });
    const etcd = new EtcdBackend({ servers: a.servers, prefix: a.prefix, compactionIntervalMs: 0 }, space);
    try {
      await etcd.open();
      if (etcd.revision() !== 0)
        throw new Error(`--etcd-prefix ${a.prefix}: ${space} already holds data (choose an empty prefix)`);
      const revision = Number(db.get(REVISION_KEY) ?? 0);
      let batch: Write[] = [];
      let count = 0;
      for (const { key, value } of db.getRange({})) {
        if (key === REVISION_KEY) continue;
        batch.push({ key, value });
        count++;
        if (batch.length === BATCH) {
          await etcd.commit(batch, revision);
          batch = [];
        }
      }
      await etcd.commit(batch, revision);
      let copied = 0;
      for await (const page of etcd.range('')) copied += page.length;
      if (copied !== count) throw new Error(`${space}: ${count} keys in LMDB, ${copied} in etcd`);
      total += count;
    } finally {
      await db.close();
      await etcd.close();
    }
  }
  writeIdentity(a.dataDir, { ...identity, storageBackend: 'etcd3' });
  return { shards: identity.shards, keys: total };
}
