/**
 * `platform-apiserver backup --data-dir DIR --to TARGET`: a copy of an LMDB data directory
 * that a server can start from, taken while the server runs. Each shard's environment is
 * copied with LMDB's own copy (mdb_env_copy through lmdb-js `backup`), inside one read
 * transaction: a consistent snapshot of that shard that never blocks the server's writers.
 * The shards are copied one after another, so two shards' snapshots are a few milliseconds
 * apart (docs/operations.md says what that means); the identity file and the generated keys
 * and certificates (pki/) go with them.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { IDENTITY_FILE, type DataDirIdentity } from './data-dir.js';
import { reasonOf } from '../api/startup-error.js';

export interface BackupResult {
  shards: number;
  keys: number;
  target: string;
}

export function parseBackupArgs(argv: string[]): { dataDir: string; target: string } {
  let dataDir = './data',
    target = '';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--data-dir') dataDir = value;
    else if (flag === '--to') target = value;
    else throw new Error(`backup: unknown flag ${flag} (usage: platform-apiserver backup --data-dir DIR --to TARGET)`);
  }
  if (!target) throw new Error('backup: --to TARGET is required (a new or empty directory)');
  return { dataDir, target };
}

export async function backupDataDir(dataDir: string, target: string): Promise<BackupResult> {
  let identity: DataDirIdentity;
  try {
    identity = JSON.parse(readFileSync(join(dataDir, IDENTITY_FILE), 'utf8')) as DataDirIdentity;
  } catch (e) {
    throw new Error(
      `--data-dir ${dataDir}: no readable ${IDENTITY_FILE} (${reasonOf(e)}): not a data directory of this server`,
    );
  }
  if (identity.storageBackend !== 'lmdb')
    throw new Error(
      `--data-dir ${dataDir}: stored in etcd (back up etcd with etcdctl snapshot save; docs/operations.md)`,
    );
  if (existsSync(target) && readdirSync(target).length > 0)
    throw new Error(`--to ${target}: not empty (choose a new or empty directory)`);
  mkdirSync(target, { recursive: true, mode: 0o700 });
  let keys = 0;
  for (let i = 0; i < identity.shards; i++) {
    const name = `shard-${i}-of-${identity.shards}`;
    const source = join(dataDir, name);
    if (!existsSync(join(source, 'data.mdb'))) continue;
    mkdirSync(join(target, name), { mode: 0o700 });
    const db = open<string, string>({ path: source, readOnly: true, encoding: 'string', compression: false });
    try {
      await db.backup(join(target, name), false);
    } finally {
      await db.close();
    }
    const copy = open<string, string>({
      path: join(target, name),
      readOnly: true,
      encoding: 'string',
      compression: false,
    });
    keys += copy.getKeysCount();
    await copy.close();
  }
  cpSync(join(dataDir, IDENTITY_FILE), join(target, IDENTITY_FILE));
  if (existsSync(join(dataDir, 'pki'))) cpSync(join(dataDir, 'pki'), join(target, 'pki'), { recursive: true });
  return { shards: identity.shards, keys, target };
}
