/**
 * `platform-apiserver migrate-to-etcd` (docs/operations.md, moving to etcd): a stopped LMDB
 * data directory's objects served from etcd afterwards, with the same uids and
 * resourceVersions; the identity file names etcd3.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { startEtcd, type TestEtcd } from '../helpers/etcd.js';
import { runMain } from '../helpers/run-main.js';

let s: TestServer | undefined;
let etcd: TestEtcd | undefined;
after(async () => {
  await s?.stop();
  s?.cleanup();
  if (etcd) {
    etcd.proc.kill('SIGKILL');
    rmSync(dirname(etcd.dataDir), { recursive: true, force: true });
  }
});

test('an LMDB data directory moves to etcd with every object as it was', async () => {
  s = await startServer(['--storage-backend', 'lmdb']);
  const dir = s.dataDir;
  for (let i = 0; i < 12; i++)
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`m-${i}`))).status,
      201,
    );
  const before = (await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/m-3')).json;
  await s.stop();
  etcd = await startEtcd();
  const r = await runMain([
    'migrate-to-etcd',
    '--data-dir',
    dir,
    '--etcd-servers',
    etcd.url,
    '--etcd-prefix',
    '/moved',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^migrated .*: 2 shards, \d+ keys, counted on both sides/);
  assert.equal(JSON.parse(readFileSync(join(dir, 'platform.json'), 'utf8')).storageBackend, 'etcd3');
  const again = await runMain([
    'migrate-to-etcd',
    '--data-dir',
    dir,
    '--etcd-servers',
    etcd.url,
    '--etcd-prefix',
    '/moved',
  ]);
  assert.equal(again.code, 1);

  s = await startServer(['--storage-backend', 'etcd3', '--etcd-servers', etcd.url, '--etcd-prefix', '/moved'], dir);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.items.length, 12);
  const after3 = (await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/m-3')).json;
  assert.equal(after3.metadata.uid, before.metadata.uid);
  assert.equal(after3.metadata.resourceVersion, before.metadata.resourceVersion);
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('after-move'))).status,
    201,
  );
});
