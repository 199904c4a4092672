/**
 * Encryption at rest through the server: secrets are stored encrypted in LMDB (read raw by the
 * test with the server stopped) and read back after a restart; a corrupt stored value (written
 * by the test) answers 500 naming its key and is force-deleted only with the gate
 * AllowUnsafeMalformedObjectDeletion and ignoreStoreReadErrorWithClusterBreakingPotential,
 * other delete options set being a 400 (resource-api.md, "Object deletion", "Force deletion").
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { storeOptions } from '../../../src/storage/lmdb/store-options.js';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { shardOf } from '../../../src/actors/routing.js';

const CONFIG = `apiVersion: apiserver.config.plat.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["secrets"]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: ${Buffer.alloc(32, 5).toString('base64')}
  - identity: {}
`;

let dir: string;
let dataDir: string;
let s: TestServer | undefined;
const secret = (name: string, value: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  data: { password: Buffer.from(value).toString('base64') },
});

/** The stored value (as the server reads it) of a key in the LMDB environment of the shard owning the type (server stopped). */
function withLmdb<T>(typeKey: string, f: (db: ReturnType<typeof open<string, string>>) => T): T {
  const db = open<string, string>(storeOptions(join(dataDir, `shard-${shardOf(typeKey, 2)}-of-2`)));
  try {
    return f(db);
  } finally {
    void db.close();
  }
}

async function start(...extra: string[]): Promise<TestServer> {
  s = await startServer(['--encryption-provider-config', join(dir, 'enc.yaml'), ...extra], dataDir);
  return s;
}
async function stop(): Promise<void> {
  await s?.stop();
  s = undefined;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'plat-enc-'));
  dataDir = join(dir, 'data');
  writeFileSync(join(dir, 'enc.yaml'), CONFIG);
});
after(async () => {
  await stop();
  rmSync(dir, { recursive: true, force: true });
});

test('secrets are stored encrypted (aescbc prefix, no plaintext), configmaps are not; both read back after a restart', async () => {
  const srv = await start();
  assert.equal(
    (await request(srv.url, 'POST', '/api/v1/namespaces/default/secrets', secret('s1', 'hunter2-very-secret'))).status,
    201,
  );
  assert.equal(
    (
      await request(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'c1' },
        data: { plain: 'visible-text' },
      })
    ).status,
    201,
  );
  await stop();
  const raw = withLmdb('/secrets', (db) => db.get('/secrets/default/s1'))!;
  assert.ok(raw.startsWith('plat:enc:aescbc:v1:key1:'), raw.slice(0, 40));
  assert.ok(!raw.includes(Buffer.from('hunter2-very-secret').toString('base64')) && !raw.includes('"kind"'));
  assert.match(withLmdb('/configmaps', (db) => db.get('/configmaps/default/c1'))!, /visible-text/);
  const again = await start();
  const got = await request(again.url, 'GET', '/api/v1/namespaces/default/secrets/s1');
  assert.equal(got.status, 200);
  assert.equal(Buffer.from(got.json.data.password, 'base64').toString(), 'hunter2-very-secret');
  assert.equal((await request(again.url, 'GET', '/api/v1/namespaces/default/secrets')).json.items.length, 1);
  await stop();
});

test('a corrupt value: 500 naming the key; force-deleted only with the gate and the option alone', async () => {
  withLmdb('/secrets', (db) =>
    db.putSync('/secrets/default/broken', 'plat:enc:aescbc:v1:key1:' + 'garbage!'.repeat(5)),
  );
  let srv = await start();
  // a readable secret of this test's own beside the corrupt one (it runs alone too)
  assert.equal(
    (await request(srv.url, 'POST', '/api/v1/namespaces/default/secrets', secret('fine', 'readable'))).status,
    201,
  );
  const path = '/api/v1/namespaces/default/secrets/broken';
  const get = await request(srv.url, 'GET', path);
  assert.equal(get.status, 500);
  assert.equal(get.json.reason, 'InternalError');
  assert.match(
    get.json.message,
    /^Internal error occurred: StorageError: corrupt object, Code: 7, Key: \/secrets\/default\/broken, ResourceVersion: 0, AdditionalErrorMsg: /,
  );
  const recreate = await request(srv.url, 'POST', '/api/v1/namespaces/default/secrets', secret('broken', 'x'));
  assert.equal(recreate.status, 409, 'the corrupt object still holds its name');
  assert.equal(recreate.json.reason, 'AlreadyExists');
  const list = await request(srv.url, 'GET', '/api/v1/namespaces/default/secrets');
  assert.equal(list.status, 500);
  assert.match(list.json.message, /Key: \/secrets\/default\/broken/);
  assert.equal(
    (await request(srv.url, 'GET', '/api/v1/namespaces/default/secrets/fine')).status,
    200,
    'other objects are fine',
  );
  const option = { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true };
  const noGate = await request(srv.url, 'DELETE', path, option);
  assert.equal(noGate.status, 500, 'without the gate the option is ignored: a normal delete fails');
  assert.equal((await request(srv.url, 'DELETE', path)).status, 500);
  await stop();

  srv = await start('--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true');
  assert.equal((await request(srv.url, 'DELETE', path)).status, 500, 'a normal delete still fails');
  for (const [extra, field] of [
    [{ gracePeriodSeconds: 0 }, 'gracePeriodSeconds'],
    [{ propagationPolicy: 'Background' }, 'propagationPolicy'],
    [{ orphanDependents: false }, 'orphanDependents'],
    [{ preconditions: { uid: 'x' } }, 'preconditions'],
    [{ dryRun: ['All'] }, 'dryRun'],
  ] as const) {
    const r = await request(srv.url, 'DELETE', path, { ...option, ...extra });
    assert.equal(r.status, 400, field);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(
      r.json.message,
      new RegExp(
        `^${field}: Invalid value: .*: can not be set together with ignoreStoreReadErrorWithClusterBreakingPotential$`,
      ),
    );
  }
  assert.equal((await request(srv.url, 'DELETE', `${path}?dryRun=All`, option)).status, 400);
  assert.equal(
    (await request(srv.url, 'DELETE', '/api/v1/namespaces/default/secrets', option)).status,
    400,
    'not with deletecollection',
  );
  const del = await request(srv.url, 'DELETE', `${path}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
  assert.equal(del.status, 200, del.text);
  assert.equal(del.json.status, 'Success');
  assert.deepEqual(del.json.details, { name: 'broken', kind: 'secrets' });
  assert.equal((await request(srv.url, 'GET', path)).status, 404);
  assert.equal((await request(srv.url, 'GET', '/api/v1/namespaces/default/secrets')).status, 200);
  // the option on a readable object: a normal delete
  assert.equal((await request(srv.url, 'DELETE', '/api/v1/namespaces/default/secrets/fine', option)).status, 200);
  await stop();
  assert.equal(
    withLmdb('/secrets', (db) => db.get('/secrets/default/broken')),
    undefined,
    'gone from LMDB',
  );
});

test('an undecodable plaintext value of an unencrypted type is corrupt too', async () => {
  withLmdb('/configmaps', (db) => db.putSync('/configmaps/default/bad-json', '{"kind":"ConfigMap",'));
  const srv = await start('--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true');
  const get = await request(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/bad-json');
  assert.equal(get.status, 500);
  assert.match(get.json.message, /Key: \/configmaps\/default\/bad-json/);
  assert.equal(
    (
      await request(srv.url, 'DELETE', '/api/v1/namespaces/default/configmaps/bad-json', {
        ignoreStoreReadErrorWithClusterBreakingPotential: true,
      })
    ).status,
    200,
  );
  assert.equal((await request(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/bad-json')).status, 404);
  await stop();
});

test('a bad encryption configuration stops the server at start', async () => {
  writeFileSync(join(dir, 'bad.yaml'), CONFIG.replace(/secret: .*/, 'secret: c2hvcnQ='));
  await assert.rejects(
    startServer(['--encryption-provider-config', join(dir, 'bad.yaml')], join(dir, 'unused')),
    /secret is not of the expected length, got 5/,
  );
});
