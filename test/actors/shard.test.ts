/**
 * The shard actor in process (no threads, no HTTP, no front read cache): a batch whose commit
 * the backend refuses (the test-only failCommitMatch) fails only the refused write; reads and
 * the other writes of the batch answer as if it had never been sent. The control batch shows
 * that a write in a batch sees the writes staged before it: without the re-run, the patch below
 * would answer from a create that never was.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Shard } from '../../src/actors/shard.js';
import { configMapOps, openShard, type LocalShard } from '../helpers/shard.js';
import type { Result } from '../../src/actors/protocol.js';

let local: LocalShard;
let shard: Shard;

before(async () => {
  local = await openShard('shard', { failCommitMatch: 'poison' });
  shard = local.shard;
});
after(() => local.close());

const { create, get, patch, list } = configMapOps;

/** code and parsed body of a result (a Status for an error) */
function answer(r: Result): { code: number; json: any } {
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

test('control: in a batch that commits, a write sees the write staged before it', async () => {
  const reply = await shard.run([create('seen'), create('seen')]);
  const [first, second] = reply.results.map(answer);
  assert.equal(first!.code, 201);
  assert.equal(second!.code, 409);
  assert.equal(second!.json.reason, 'AlreadyExists');
});

test('a refused commit fails only its write; reads and writes batched with it never see it', async () => {
  // its own namespace and an earlier committed batch (it runs alone too)
  const NS = 'refused';
  assert.equal(answer((await shard.run([create('before-1', NS)])).results[0]!).code, 201);
  const ops = [
    create('good-1', NS),
    create('poison-1', NS),
    patch('poison-1', NS),
    get('poison-1', NS),
    list(NS),
    create('good-2', NS),
    get('good-1', NS),
  ];
  const reply = await shard.run(ops);
  assert.deepEqual(
    reply.results.map((r) => r.id),
    ops.map((o) => o.id),
    'one answer per operation, in order',
  );
  const [good1, poison, patched, readPoison, listed, good2, readGood] = reply.results.map(answer);
  assert.equal(good1!.code, 201);
  assert.equal(good2!.code, 201);
  assert.equal(poison!.code, 500);
  assert.match(poison!.json.message, /^Internal error occurred: storage commit failed: injected commit failure/);
  assert.equal(patched!.code, 404, 'a write after the refused one does not build on it');
  assert.equal(readPoison!.code, 404, 'the refused write is not read');
  assert.deepEqual(
    listed!.json.items.map((i: any) => i.metadata.name),
    ['before-1', 'good-1'],
    'the list holds what committed before it, never the refused write',
  );
  assert.equal(readGood!.code, 200);
  // the events published are the committed writes only
  assert.deepEqual(reply.events.map((e) => e.name).sort(), ['good-1', 'good-2']);
  const after = answer((await shard.run([get('poison-1', NS)])).results[0]!);
  assert.equal(after.code, 404, 'nothing of it stored');
});
