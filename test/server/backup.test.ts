/**
 * `platform-apiserver backup` (issue 20, docs/operations.md): a copy of the data directory
 * taken while the server runs and writes, from which a server starts with every object the
 * copy's snapshot held.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { runMain } from '../helpers/run-main.js';

const dir = mkdtempSync(join(tmpdir(), 'plat-backup-'));
let s: TestServer | undefined;
let restored: TestServer | undefined;
after(async () => {
  for (const t of [s, restored])
    if (t) {
      await t.stop();
      t.cleanup();
    }
  rmSync(dir, { recursive: true, force: true });
});

test('backup of a running server restores every object written before it', async () => {
  s = await startServer();
  for (let i = 0; i < 20; i++)
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`before-${i}`))).status,
      201,
    );
  // writes continue while the copy runs (bounded: 50 requests)
  let writing = true;
  const writer = (async () => {
    for (let i = 0; i < 50 && writing; i++)
      await request(s!.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`during-${i}`));
  })();
  const target = join(dir, 'copy');
  const r = await runMain(['backup', '--data-dir', s.dataDir, '--to', target]);
  writing = false;
  await writer;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^backed up .* to .*: 2 shards, \d+ keys/);
  assert.deepEqual(
    JSON.parse(readFileSync(join(target, 'platform.json'), 'utf8')),
    JSON.parse(readFileSync(join(s.dataDir, 'platform.json'), 'utf8')),
  );
  const again = await runMain(['backup', '--data-dir', s.dataDir, '--to', target]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^error: --to .*: not empty \(choose a new or empty directory\)\n$/);

  restored = await startServer([], target);
  const names = new Set(
    (await request(restored.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.items.map(
      (c: any) => c.metadata.name,
    ),
  );
  for (let i = 0; i < 20; i++) assert.ok(names.has(`before-${i}`), `before-${i}`);
});
