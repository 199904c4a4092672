/**
 * File modes of the data directory (issue 18 item 9). Everything the server keeps there (LMDB
 * shards holding every Secret, the cluster CA key under pki/, the admin kubeconfig) is for the
 * server's user only: at start every directory under the data directory becomes 0700 and every
 * file 0600, whatever a previous run or another tool left, and the process umask becomes 077 so
 * files created later (LMDB's data.mdb and lock.mdb, keys openssl writes, new shards) are born
 * private. The data directory itself is the operator's choice: it is created 0700 when missing
 * and otherwise only warned about when group or others may enter it (as etcd warns).
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/** Process umask after secureDataDir: no group or other bits on anything the process creates. */
export const UMASK = 0o077;

/**
 * Creates the data directory when missing, restricts everything under it, sets the umask.
 * Returns warnings for stderr (a too-open data directory, entries that could not be changed).
 * Symbolic links are neither followed nor changed; entries of other users are reported.
 */
export function secureDataDir(dataDir: string): string[] {
  process.umask(UMASK);
  const warnings: string[] = [];
  let st: Stats;
  try {
    st = lstatSync(dataDir);
  } catch {
    mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
    return warnings;
  }
  if ((st.mode & 0o077) !== 0) {
    warnings.push(`data directory ${dataDir} has mode ${octal(st.mode)}: group and others can reach it; use 0700`);
  }
  if (st.isDirectory()) restrictTree(dataDir, warnings);
  return warnings;
}

/** Every directory below `dir` 0700 and every file 0600 (iterative: no recursion on deep trees). */
function restrictTree(dir: string, warnings: string[]): void {
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch (e) {
      warnings.push(`cannot read ${d}: ${(e as Error).message}`);
      continue;
    }
    for (const name of names) {
      const path = join(d, name);
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (!st || st.isSymbolicLink()) continue;
      if (st.isDirectory()) {
        restrict(path, st, DIR_MODE, warnings);
        stack.push(path);
      } else if (st.isFile()) {
        restrict(path, st, FILE_MODE, warnings);
      }
    }
  }
}

function restrict(path: string, st: Stats, mode: number, warnings: string[]): void {
  if ((st.mode & 0o777) === mode) return;
  try {
    chmodSync(path, mode);
  } catch (e) {
    warnings.push(`cannot restrict ${path} (mode ${octal(st.mode)}) to ${octal(mode)}: ${(e as Error).message}`);
  }
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
