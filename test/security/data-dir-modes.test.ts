/**
 * Issue 18 item 9: nothing under the data directory is readable by other local users. A fresh
 * run creates 0700 directories and 0600 files (LMDB's data.mdb included); a data directory an
 * older run or another tool left open (0755 directories, 0644 files, pki included) is
 * restricted at start; the data directory itself is only warned about on stderr.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, configMap } from '../helpers/server.js';

/** Every directory and file under dir (not dir itself) with its permission bits. */
function modes(dir: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    out.push({ path, dir: st.isDirectory(), mode: st.mode & 0o777 });
    if (st.isDirectory()) out.push(...modes(path));
  }
  return out;
}

function assertPrivate(dir: string): void {
  const all = modes(dir);
  assert.ok(
    all.some((e) => e.path.endsWith('data.mdb')),
    'the shards are stored under the data directory',
  );
  for (const e of all) assert.equal(e.mode, e.dir ? 0o700 : 0o600, `${e.path} has mode ${e.mode.toString(8)}`);
}

test('fresh and pre-existing data directories: 0700 directories, 0600 files; an open data directory is warned about', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-modes-'));
  try {
    const args = ['--storage-backend', 'lmdb'];
    const first = await startServer(args, dir);
    try {
      assert.equal(
        (
          await request(first.url, 'POST', '/api/v1/namespaces/default/secrets', {
            metadata: { name: 's' },
            stringData: { k: 'v' },
          })
        ).status,
        201,
      );
      assertPrivate(dir);
      assert.doesNotMatch(first.stderr(), /data directory .* has mode/);
    } finally {
      await first.stop();
    }
    // what an older run (umask 022) or a restore left: everything open to others
    chmodSync(dir, 0o755);
    for (const e of modes(dir)) chmodSync(e.path, e.dir ? 0o755 : 0o644);
    mkdirSync(join(dir, 'pki'), { recursive: true, mode: 0o755 });
    writeFileSync(join(dir, 'pki', 'left-over.key'), 'secret\n', { mode: 0o644 });
    chmodSync(join(dir, 'pki'), 0o755);
    const second = await startServer(args, dir);
    try {
      assertPrivate(dir);
      assert.equal(statSync(join(dir, 'pki', 'left-over.key')).mode & 0o777, 0o600);
      assert.match(second.stderr(), /warning: data directory .* has mode 0755: group and others can reach it/);
      assert.equal(statSync(dir).mode & 0o777, 0o755, "the data directory itself is the operator's choice");
      // still serving what the first run stored, and storing more, privately
      assert.equal((await request(second.url, 'GET', '/api/v1/namespaces/default/secrets/s')).status, 200);
      assert.equal(
        (await request(second.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('after'))).status,
        201,
      );
      assertPrivate(dir);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
