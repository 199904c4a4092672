/**
 * A graceful stop lets the writes already handed to a shard actor finish (src/actors/pool.ts
 * close): a write in flight when SIGTERM's drain stops the actors is committed and answered,
 * not cut off with a 500 by the thread's termination, and the server exits 0. The write is held
 * in the actor by the test-only fault `<dir>/hold-batch` (src/actors/test-faults.ts) until the
 * server has begun draining. LMDB only (`--storage-backend lmdb` even under PLAT_TEST_STORAGE=etcd3):
 * on etcd the leader elector hands its Lease back before the drain, a write that would queue
 * behind the held batch in the same actor, so the drain would never begin while the test holds it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { HOLD_NAME } from '../../src/actors/test-faults.js';

const CM = '/api/v1/namespaces/default/configmaps';
const faults = mkdtempSync(join(tmpdir(), 'plat-faults-'));
const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  servers[0]?.cleanup();
  rmSync(faults, { recursive: true, force: true });
});

test('a write in flight when the server drains is committed and answered, then the server exits 0', async () => {
  const s = await startServer(['--storage-backend', 'lmdb', '--test-actor-faults', faults]);
  servers.push(s);
  const made = await request(s.url, 'POST', CM, { metadata: { name: HOLD_NAME }, data: { k: 'before' } });
  assert.equal(made.status, 201, made.text);

  writeFileSync(join(faults, 'hold-batch'), '');
  const patch = request(s.url, 'PATCH', `${CM}/${HOLD_NAME}`, JSON.stringify({ data: { k: 'after' } }), {
    'content-type': 'application/merge-patch+json',
  });
  await until(async () => (existsSync(join(faults, 'held')) ? true : undefined), 'the patch held in the actor');

  const exited = once(s.proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  s.proc.kill('SIGTERM');
  await until(async () => (/Draining/.test(s.stderr()) ? true : undefined), 'the server to start draining', 30_000);
  rmSync(join(faults, 'hold-batch'));

  const reply = await patch;
  assert.equal(reply.status, 200, reply.text);
  assert.equal(reply.json.data.k, 'after');
  const [code, signal] = await exited;
  assert.equal(signal, null);
  assert.equal(code, 0);

  // acknowledged, so stored: a server started on the same data directory reads it back
  const again = await startServer(['--storage-backend', 'lmdb'], s.dataDir);
  servers.push(again);
  const got = await request(again.url, 'GET', `${CM}/${HOLD_NAME}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.data.k, 'after');
});
