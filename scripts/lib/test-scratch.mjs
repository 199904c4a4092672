// Where the tests' data directories go (the servers' LMDB shards, the per-file etcd members, PKI
// files: every test makes them under os.tmpdir()). On a tmpfs an fsync costs nothing; on the disk
// each LMDB commit and each etcd WAL write waits for one (measured: 300 sequential creates took
// 8.3-10.7 s with /tmp on disk, 6.0-6.2 s on /dev/shm, at load 25). Durability tests kill
// processes, not the machine, so what they check is the same on either.
import { mkdtempSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/** the kernel's magic number of tmpfs in statfs(2)'s f_type */
export const TMPFS_MAGIC = 0x01021994;
/** a tmpfs with less free room than this (say Docker's default 64 MiB /dev/shm) is not used */
export const MIN_FREE_BYTES = 2 * 1024 ** 3;

/**
 * A fresh directory for TMPDIR of the test processes, or undefined to leave TMPDIR alone:
 * TEST_TMPDIR=os (or an explicit TMPDIR) keeps the system's; TEST_TMPDIR=<dir> uses that folder;
 * else /dev/shm when it is a tmpfs with MIN_FREE_BYTES free. The caller removes it after the run.
 */
export function testScratchDir(env, candidate = '/dev/shm') {
  if (env.TEST_TMPDIR === 'os') return undefined;
  if (env.TEST_TMPDIR) return mkdtempSync(join(env.TEST_TMPDIR, 'plat-tests-'));
  if (env.TMPDIR) return undefined;
  try {
    const fs = statfsSync(candidate);
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < MIN_FREE_BYTES) return undefined;
    return mkdtempSync(join(candidate, 'plat-tests-'));
  } catch {
    return undefined;
  }
}
