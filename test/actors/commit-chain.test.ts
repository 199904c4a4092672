/**
 * LMDB queues a batch's transaction before the one before it is known committed, conditional
 * on it: when that one fails, every transaction queued after it is skipped (EarlierCommitFailed),
 * and the shard runs those batches again once the batches before are settled: their creates
 * answer 201 once, as if nothing had happened, and each is stored and announced once.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import type { Result } from '../../src/actors/protocol.js';
import { configMapOps, shardConfig } from '../helpers/shard.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const code = (r: Result | undefined): number => (r && 'code' in r ? r.code : r && 'error' in r ? r.error.code : 0);

test('batches whose transactions were skipped after a failed one run again and answer once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-chain-'));
  dirs.push(dir);
  const shard = new Shard(shardConfig(dir));
  await shard.init();
  const backend = (shard as unknown as { backend: { chainTip?: string; close(): Promise<void> } }).backend;
  await shard.run([configMapOps.create('before', 'chain')]);
  // the next transaction fails (its condition names a token that was never written), and so is
  // every transaction queued after it before the failure is known
  backend.chainTip = '\u0000meta/commit/never';
  const a = shard.run([configMapOps.create('a', 'chain')]);
  const b = shard.run([configMapOps.create('b', 'chain'), configMapOps.create('a', 'chain')]);
  const [ra, rb] = await Promise.all([a, b]);
  assert.deepEqual(ra.results.map(code), [201]);
  // b's second create names what a created: a conflict, once a is stored
  assert.deepEqual(rb.results.map(code), [201, 409]);
  assert.deepEqual(
    [...ra.events, ...rb.events].map((e) => [e.type, e.name]),
    [
      ['ADDED', 'a'],
      ['ADDED', 'b'],
    ],
  );
  const listed = await shard.run([configMapOps.list('chain')]);
  const items = JSON.parse(Buffer.from((listed.results[0] as { body: Uint8Array }).body).toString('utf8')) as {
    items: { metadata: { name: string } }[];
  };
  assert.deepEqual(items.items.map((i) => i.metadata.name).sort(), ['a', 'b', 'before']);
  await backend.close();
});
