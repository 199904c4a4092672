/**
 * The data directory's identity file (issue 20 item 4): written at creation (mode 0600), a
 * start with another shard count, API domain or storage backend refused with a message naming
 * the flag, and `--reshard` moving every key to the new layout (counted independently here,
 * by opening the LMDB environments before and after).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { storeOptions } from '../../src/storage/lmdb/store-options.js';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { runMain } from '../helpers/run-main.js';
import { FORMAT_VERSION, prepareDataDir } from '../../src/server/data-dir.js';

let s: TestServer | undefined;
after(async () => {
  await s?.stop();
  s?.cleanup();
});

/** Every key of the LMDB environments `shard-<i>-of-<n>` (the revision key aside). */
async function storedKeys(dataDir: string, n: number): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const db = open<string, string>({ ...storeOptions(join(dataDir, `shard-${i}-of-${n}`)), readOnly: true });
    for (const { key, value } of db.getRange({})) if (key !== '\u0000meta/revision') keys.set(key, value);
    await db.close();
  }
  return keys;
}

const refused = async (dataDir: string, args: string[]) => {
  const r = await runMain(['--data-dir', dataDir, '--secure-port', 'off', '--port', '0', ...args]);
  assert.equal(r.code, 1, r.stderr);
  return r.stderr.trim();
};

test('identity file at creation; another shard count, API domain or backend refused; --reshard keeps every key', async () => {
  s = await startServer(['--shards', '2']);
  const dir = s.dataDir;
  const file = join(dir, 'platform.json');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), {
    formatVersion: 2,
    shards: 2,
    apiDomain: 'plat.io',
    storageBackend: 'lmdb',
  });
  assert.equal(statSync(file).mode & 0o777, 0o600);
  for (let i = 0; i < 30; i++)
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`cm-${i}`))).status,
      201,
    );
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'sec' } })).status,
    201,
  );
  await s.stop();
  const before = await storedKeys(dir, 2);
  assert.ok(before.size > 31, `${before.size} keys`);

  assert.equal(
    await refused(dir, ['--shards', '3']),
    `error: --shards 3: the data directory ${dir} holds 2 shards (start with --shards 2, or redistribute the stored keys once with --shards 3 --reshard)`,
  );
  assert.equal(
    await refused(dir, ['--shards', '2', '--api-domain', 'k8s.io']),
    `error: --api-domain k8s.io: the data directory ${dir} was created with --api-domain plat.io (start with --api-domain plat.io, or use another --data-dir)`,
  );
  assert.match(
    await refused(dir, ['--shards', '2', '--storage-backend', 'etcd3', '--etcd-servers', 'http://127.0.0.1:1']),
    /^error: --storage-backend etcd3: the data directory .* was created with --storage-backend lmdb \(start with --storage-backend lmdb, or use another --data-dir/,
  );
  assert.deepEqual(
    readdirSync(dir)
      .filter((n) => n.startsWith('shard-'))
      .sort(),
    ['shard-0-of-2', 'shard-1-of-2'],
    'a refused start opens nothing',
  );

  s = await startServer(['--shards', '3', '--reshard'], dir);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.items.length, 30);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/secrets/sec')).status, 200);
  await s.stop();
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).shards, 3);
  const afterKeys = await storedKeys(dir, 3);
  // the server's own writes after the start (none to configmaps) may add keys; every old key is there, unchanged
  for (const [k, v] of before) assert.equal(afterKeys.get(k), v, k);
  assert.ok(
    readdirSync(dir).some((n) => n.startsWith('resharded-2-to-3-')),
    'the old shards are kept aside',
  );
  s = await startServer(['--shards', '3'], dir);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.items.length, 30);
});

test('a version-1 directory (uncompressed LMDB values) is adopted and marked 2; a newer version is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-format-'));
  try {
    const file = join(dir, 'platform.json');
    const identity = (v: number) =>
      JSON.stringify({ formatVersion: v, shards: 2, apiDomain: 'plat.io', storageBackend: 'lmdb' });
    const o = { dataDir: dir, shards: 2, apiDomain: 'plat.io', storageBackend: 'lmdb' as const, reshard: false };
    assert.equal(FORMAT_VERSION, 2);
    writeFileSync(file, identity(1));
    assert.equal(prepareDataDir(o).kind, 'matches');
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).formatVersion, 2);
    writeFileSync(file, identity(3));
    assert.throws(
      () => prepareDataDir(o),
      new Error(
        `--data-dir ${dir}: data format version 3 is newer than this server's (2) (run the release that wrote it, or restore a backup)`,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
