/**
 * The data directory's identity, `<data-dir>/platform.json`, written when the directory is
 * created: the layout version, shard count, API domain and storage backend the stored data
 * was written with. A start with other settings would hide the data (another shard count
 * reads other LMDB environments) or misread it (another API domain), so it is refused with a
 * message naming the flag and the fix; the shard count can change with `--reshard`.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { flagError, reasonOf } from '../api/startup-error.js';

export const IDENTITY_FILE = 'platform.json';
/**
 * The on-disk layout this server reads and writes (bump when it changes incompatibly). 2: LMDB
 * values of 512 bytes or more are LZ4-compressed against a fixed dictionary
 * (src/storage/lmdb/store-options.ts); this server reads version-1 values as they are and
 * rewrites the identity file as 2 on its first start, so a version-1 server refuses the directory
 * instead of misreading the compressed values.
 */
export const FORMAT_VERSION = 2;

export interface DataDirIdentity {
  formatVersion: number;
  shards: number;
  apiDomain: string;
  storageBackend: 'lmdb' | 'etcd3';
}

export interface DataDirOptions extends Omit<DataDirIdentity, 'formatVersion'> {
  dataDir: string;
  reshard: boolean;
}

/** What prepareDataDir found: a new directory, one matching the flags, or one to reshard first. */
export type DataDirState =
  | { kind: 'created' | 'matches'; identity: DataDirIdentity }
  | { kind: 'reshard'; identity: DataDirIdentity; from: number };

/** Creates the directory if needed (0700) and checks it is a writable directory. */
export function ensureWritableDir(dir: string): void {
  const fix = 'choose a writable directory with --data-dir';
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw flagError('data-dir', dir, reasonOf(e), fix);
  }
}

/** The shard counts of the LMDB environments present (`shard-<i>-of-<n>`), before the identity file existed. */
export function shardLayouts(dir: string): number[] {
  const counts = new Set<number>();
  for (const name of readdirSync(dir)) {
    const m = /^shard-\d+-of-(\d+)$/.exec(name);
    if (m) counts.add(Number(m[1]));
  }
  return [...counts].sort((a, b) => a - b);
}

function readIdentity(file: string): DataDirIdentity {
  let v: Partial<DataDirIdentity>;
  try {
    v = JSON.parse(readFileSync(file, 'utf8')) as Partial<DataDirIdentity>;
  } catch (e) {
    throw new Error(
      `--data-dir: ${file}: ${reasonOf(e)} (restore it from a backup, or move the directory aside and start afresh)`,
    );
  }
  if (
    typeof v.formatVersion !== 'number' ||
    typeof v.shards !== 'number' ||
    typeof v.apiDomain !== 'string' ||
    (v.storageBackend !== 'lmdb' && v.storageBackend !== 'etcd3')
  ) {
    throw new Error(
      `--data-dir: ${file}: not a valid identity file (formatVersion, shards, apiDomain, storageBackend required)`,
    );
  }
  return v as DataDirIdentity;
}

/** Writes the identity file (0600) atomically: a crash leaves the old one or the new one. */
export function writeIdentity(dir: string, id: DataDirIdentity): void {
  const file = join(dir, IDENTITY_FILE);
  const body =
    JSON.stringify(
      {
        formatVersion: id.formatVersion,
        shards: id.shards,
        apiDomain: id.apiDomain,
        storageBackend: id.storageBackend,
      },
      null,
      2,
    ) + '\n';
  writeFileSync(`${file}.tmp`, body, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/**
 * Checks the directory against the flags before anything opens it. A directory written before
 * identity files existed is adopted when its one shard layout matches; a mismatch throws the
 * startup error; a differing shard count with `--reshard` (LMDB) asks the caller to reshard.
 */
export function prepareDataDir(o: DataDirOptions): DataDirState {
  ensureWritableDir(o.dataDir);
  const file = join(o.dataDir, IDENTITY_FILE);
  const wanted: DataDirIdentity = {
    formatVersion: FORMAT_VERSION,
    shards: o.shards,
    apiDomain: o.apiDomain,
    storageBackend: o.storageBackend,
  };
  if (!existsSync(file)) {
    const layouts = o.storageBackend === 'lmdb' ? shardLayouts(o.dataDir) : [];
    if (layouts.length > 1) {
      throw new Error(
        `--data-dir ${o.dataDir}: holds LMDB shards of several layouts (${layouts.join(', ')} shards) and no ${IDENTITY_FILE} (move the layout not in use aside, then start with its --shards)`,
      );
    }
    if (layouts.length === 1 && layouts[0] !== o.shards) {
      const from = layouts[0]!;
      if (o.reshard) return { kind: 'reshard', identity: wanted, from };
      throw shardMismatch(o, from);
    }
    writeIdentity(o.dataDir, wanted);
    return { kind: layouts.length ? 'matches' : 'created', identity: wanted };
  }
  const have = readIdentity(file);
  if (have.formatVersion > FORMAT_VERSION) {
    throw new Error(
      `--data-dir ${o.dataDir}: data format version ${have.formatVersion} is newer than this server's (${FORMAT_VERSION}) (run the release that wrote it, or restore a backup)`,
    );
  }
  if (have.storageBackend !== o.storageBackend) {
    throw flagError(
      'storage-backend',
      o.storageBackend,
      `the data directory ${o.dataDir} was created with --storage-backend ${have.storageBackend}`,
      `start with --storage-backend ${have.storageBackend}, or use another --data-dir; docs/operations.md describes moving to etcd`,
    );
  }
  if (have.apiDomain !== o.apiDomain) {
    throw flagError(
      'api-domain',
      o.apiDomain,
      `the data directory ${o.dataDir} was created with --api-domain ${have.apiDomain}`,
      `start with --api-domain ${have.apiDomain}, or use another --data-dir`,
    );
  }
  if (have.shards !== o.shards) {
    if (o.reshard && o.storageBackend === 'lmdb') return { kind: 'reshard', identity: wanted, from: have.shards };
    throw shardMismatch(o, have.shards);
  }
  if (have.formatVersion < FORMAT_VERSION) writeIdentity(o.dataDir, wanted);
  return { kind: 'matches', identity: wanted };
}

function shardMismatch(o: DataDirOptions, have: number): Error {
  const fix =
    o.storageBackend === 'lmdb'
      ? `start with --shards ${have}, or redistribute the stored keys once with --shards ${o.shards} --reshard`
      : `start with --shards ${have}`;
  return flagError('shards', o.shards, `the data directory ${o.dataDir} holds ${have} shards`, fix);
}
