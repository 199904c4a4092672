/**
 * `--reshard`: an offline redistribution of an LMDB data directory's keys from one shard count
 * to another, run at start before any shard opens its environment. Every key is copied to the
 * shard that owns its type under the new count (src/actors/routing.ts), each new environment
 * gets the highest revision of the old ones (resourceVersions only grow), and the copy is
 * verified key by key and by count before the identity file names the new count. The old
 * environments are kept in `<data-dir>/resharded-<from>-to-<to>-<time>/` for the operator to
 * remove. A crash before the identity file is rewritten leaves the old layout in force; the
 * next `--reshard` starts over.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { storeOptions } from '../storage/lmdb/store-options.js';
import { shardOf } from '../actors/routing.js';
import { LEASE_PREFIX } from '../actors/leases.js';
import { writeIdentity, type DataDirIdentity } from './data-dir.js';

/** The LMDB backend's revision key (src/storage/lmdb/lmdb-backend.ts): bookkeeping, not data. */
const REVISION_KEY = '\u0000meta/revision';
const BATCH = 2000;

export interface ReshardResult {
  from: number;
  to: number;
  keysBefore: number;
  keysAfter: number;
  backupDir: string;
}

const shardDir = (dir: string, i: number, n: number) => join(dir, `shard-${i}-of-${n}`);
const openEnv = (path: string): RootDatabase<string, string> => open<string, string>(storeOptions(path));

/** The type key a stored key belongs to (leases route with their object's type). */
export function typeKeyOfStored(key: string): string {
  const k = key.startsWith(LEASE_PREFIX) ? key.slice(LEASE_PREFIX.length) : key;
  const slash = k.indexOf('/', k.indexOf('/') + 1);
  return slash < 0 ? k : k.slice(0, slash);
}

/** Counts the data keys (everything but the revision) of a set of environments. */
export function countKeys(envs: readonly RootDatabase<string, string>[]): number {
  let n = 0;
  for (const db of envs) for (const key of db.getKeys()) if (key !== REVISION_KEY) n++;
  return n;
}

export async function reshard(dataDir: string, from: number, identity: DataDirIdentity): Promise<ReshardResult> {
  const to = identity.shards;
  const olds = Array.from({ length: from }, (_, i) => openEnv(shardDir(dataDir, i, from)));
  // stale environments of the new layout (an earlier start with this count, an interrupted
  // reshard) are not named by the identity file: they hold nothing to keep
  for (let i = 0; i < to; i++) rmSync(shardDir(dataDir, i, to), { recursive: true, force: true });
  const news = Array.from({ length: to }, (_, i) => openEnv(shardDir(dataDir, i, to)));
  try {
    const keysBefore = countKeys(olds);
    const revision = Math.max(0, ...olds.map((db) => Number(db.get(REVISION_KEY) ?? 0)));
    await copyAll(olds, news, to);
    for (const db of news) await db.put(REVISION_KEY, String(revision));
    await Promise.all(news.map((db) => db.flushed));
    const keysAfter = countKeys(news);
    verify(olds, news, to);
    if (keysAfter !== keysBefore)
      throw new Error(
        `--reshard: ${keysBefore} keys before and ${keysAfter} after: nothing changed (the old layout stays in force)`,
      );
    await Promise.all([...olds, ...news].map((db) => db.close()));
    writeIdentity(dataDir, identity);
    const backupDir = join(dataDir, `resharded-${from}-to-${to}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(backupDir, { mode: 0o700 });
    for (let i = 0; i < from; i++)
      if (existsSync(shardDir(dataDir, i, from)))
        renameSync(shardDir(dataDir, i, from), join(backupDir, `shard-${i}-of-${from}`));
    return { from, to, keysBefore, keysAfter, backupDir };
  } catch (e) {
    await Promise.all([...olds, ...news].map((db) => db.close().catch(() => undefined)));
    for (let i = 0; i < to; i++) rmSync(shardDir(dataDir, i, to), { recursive: true, force: true });
    throw e;
  }
}

async function copyAll(
  olds: RootDatabase<string, string>[],
  news: RootDatabase<string, string>[],
  to: number,
): Promise<void> {
  let pending: [number, string, string][] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    await Promise.all(
      news.map((db, i) =>
        db.transaction(() => {
          for (const [shard, key, value] of batch) if (shard === i) db.putSync(key, value);
        }),
      ),
    );
  };
  for (const db of olds) {
    for (const { key, value } of db.getRange({})) {
      if (key === REVISION_KEY) continue;
      pending.push([shardOf(typeKeyOfStored(key), to), key, value]);
      if (pending.length >= BATCH) await flush();
    }
  }
  await flush();
}

/** Every old key is in its new shard with the same value. */
function verify(olds: RootDatabase<string, string>[], news: RootDatabase<string, string>[], to: number): void {
  for (const db of olds) {
    for (const { key, value } of db.getRange({})) {
      if (key === REVISION_KEY) continue;
      if (news[shardOf(typeKeyOfStored(key), to)]!.get(key) !== value)
        throw new Error(
          `--reshard: key ${JSON.stringify(key)} was not copied intact: nothing changed (the old layout stays in force)`,
        );
    }
  }
}
