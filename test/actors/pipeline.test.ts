/**
 * Pipelined batches in the shard actor (in process, no threads): a batch executes while the
 * batch before it is still committing. It must read that batch's writes as if committed, answer
 * and publish only after it, in order; a LIST waits for the batch before to be published; and
 * when the batch before fails to commit, a batch that read its writes runs again.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import type { BatchReply, Op, Result } from '../../src/actors/protocol.js';
import type { Backend } from '../../src/storage/interface.js';
import { until } from '../helpers/poll.js';
import { configMapOps, shardConfig } from '../helpers/shard.js';

let dir: string;
let shard: Shard;
const rvBuffer = new SharedArrayBuffer(8);
/** commits wait for this while set (one batch's commit held in flight) */
let hold: Promise<void> | undefined;
let commits = 0;
/** while set, a commit resolves (is durable) only after this, though written before it */
let holdDurable: Promise<void> | undefined;
/** batch executions so far (a batch run again counts again) */
let executions = 0;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plat-pipeline-'));
  shard = new Shard(shardConfig(dir, rvBuffer));
  await shard.init();
  const inside = shard as unknown as { backend: Backend; execute: (ops: Op[]) => unknown };
  const execute = inside.execute.bind(shard);
  inside.execute = (ops) => {
    executions++;
    return execute(ops);
  };
  const backend = inside.backend;
  const commit = backend.commit.bind(backend);
  backend.commit = async (writes, revision, written) => {
    commits++;
    if (hold) await hold;
    // a refusal that comes from the store after the batches behind it executed
    if (writes.some((w) => w.key.includes('refuse'))) throw new Error('refused by the test store');
    const durable = holdDurable;
    await commit(writes, revision, written);
    if (durable) await durable;
  };
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const { create, patch, list } = configMapOps;

interface Answer {
  code: number;
  json: { reason?: string; message?: string; metadata: { resourceVersion: string; name?: string }; items?: unknown[] };
}
function answer(r: Result): Answer {
  if ('error' in r) return { code: r.error.code, json: r.error as unknown as Answer['json'] };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

/** Runs the first batch with its commit held until the second batch has executed. */
async function overlapped(first: Op[], second: Op[]): Promise<[BatchReply, BatchReply, string[], number]> {
  let release!: () => void;
  hold = new Promise((r) => (release = r));
  const order: string[] = [];
  const before = commits;
  const a = shard.run(first).then((r) => {
    order.push('first');
    return r;
  });
  await until(async () => (commits > before ? true : undefined), 'the first commit', 5_000);
  const ran = executions;
  const b = shard.run(second).then((r) => {
    order.push('second');
    return r;
  });
  // the second batch executes while the first's commit is held (a LIST waits instead)
  const executed = await until(async () => (executions > ran ? true : undefined), 'the second batch', 2_000).then(
    () => true,
    () => false,
  );
  hold = undefined;
  release();
  const [ra, rb] = await Promise.all([a, b]);
  assert.equal(executed, second[0]!.op !== 'list', 'the second batch executed during the first commit (not a LIST)');
  return [ra, rb, order, executions - ran];
}

test('a batch executed during the commit before it reads its writes; answers and events keep the order', async () => {
  const NS = 'pipe-a';
  const [ra, rb, order] = await overlapped(
    [create('one', NS)],
    [create('one', NS), patch('one', NS), create('two', NS)],
  );
  assert.deepEqual(order, ['first', 'second']);
  const [one] = ra.results.map(answer);
  const [dup, patched, two] = rb.results.map(answer);
  assert.equal(one!.code, 201);
  assert.equal(dup!.code, 409, 'the create in flight before it occupies the name');
  assert.equal(dup!.json.reason, 'AlreadyExists');
  assert.equal(patched!.code, 200, 'the patch builds on the create in flight before it');
  assert.ok(Number(patched!.json.metadata.resourceVersion) > Number(one!.json.metadata.resourceVersion));
  assert.equal(two!.code, 201);
  const rvs = [...ra.events, ...rb.events].map((e) => e.rv);
  assert.deepEqual(
    rvs,
    [...rvs].sort((x, y) => x - y),
    'events in revision order across the batches',
  );
  assert.deepEqual(
    rb.events.map((e) => [e.type, e.name]),
    [
      ['MODIFIED', 'one'],
      ['ADDED', 'two'],
    ],
  );
});

test('a LIST waits for the batch before it to be published', async () => {
  const NS = 'pipe-b';
  const [ra, rb] = await overlapped([create('held', NS)], [list(NS)]);
  const created = answer(ra.results[0]!);
  const listed = answer(rb.results[0]!);
  assert.equal(created.code, 201);
  assert.deepEqual(
    (listed.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
    ['held'],
  );
  assert.ok(Number(listed.json.metadata.resourceVersion) >= Number(created.json.metadata.resourceVersion));
});

test('a batch that read writes whose commit failed runs again', async () => {
  const NS = 'pipe-c';
  // the second create saw the first in flight (409); the first never committed, so it runs again
  const [ra, rb, , runs] = await overlapped([create('refuse-1', NS)], [create('refuse-1', NS)]);
  assert.equal(runs, 2, 'the second batch ran twice');
  const first = answer(ra.results[0]!);
  const second = answer(rb.results[0]!);
  assert.equal(first.code, 500);
  assert.equal(
    second.code,
    500,
    `run again, its own commit refused too (not 409 from a write that never was): ${second.json.message}`,
  );
  assert.match(second.json.message ?? '', /storage commit failed: refused by the test store/);
  // and a batch after a failed one still reads committed state correctly
  const [rc, rd] = await overlapped(
    [create('refuse-2', NS), create('ok-1', NS)],
    [create('ok-1', NS), patch('refuse-2', NS)],
  );
  assert.deepEqual(
    rc.results.map((r) => answer(r).code),
    [500, 201],
  );
  assert.deepEqual(
    rd.results.map((r) => answer(r).code),
    [409, 404],
  );
  assert.deepEqual(
    [...rc.events, ...rd.events].map((e) => e.name),
    ['ok-1'],
  );
});

test("the next batch's transaction starts once the one before is written, before it is durable", async () => {
  const NS = 'pipe-d';
  let release!: () => void;
  holdDurable = new Promise((r) => (release = r));
  const before = commits;
  const order: string[] = [];
  const a = shard.run([create('first', NS)]).then((r) => {
    order.push('first');
    return r;
  });
  await until(async () => (commits > before ? true : undefined), 'the first commit', 5_000);
  const b = shard.run([create('second', NS)]).then((r) => {
    order.push('second');
    return r;
  });
  const started = await until(async () => (commits > before + 1 ? true : undefined), 'the second commit', 2_000).then(
    () => true,
    () => false,
  );
  holdDurable = undefined;
  release();
  const [ra, rb] = await Promise.all([a, b]);
  assert.ok(started, 'the second transaction started while the first was not yet durable');
  assert.deepEqual(order, ['first', 'second'], 'answered in order');
  assert.deepEqual([answer(ra.results[0]!).code, answer(rb.results[0]!).code], [201, 201]);
});

test('a refused commit keeps the writes of the batch before it, written and not yet durable, readable', async () => {
  const NS = 'pipe-e';
  let release!: () => void;
  holdDurable = new Promise((r) => (release = r));
  const before = commits;
  const a = shard.run([create('kept', NS)]);
  await until(async () => (commits > before ? true : undefined), 'the first commit', 5_000);
  // the second batch's commit is refused while the first waits to be durable
  const b = shard.run([create('refuse-3', NS)]);
  await until(async () => (commits > before + 1 ? true : undefined), 'the second commit', 5_000);
  const ran = executions;
  const c = shard.run([create('kept', NS)]);
  await until(async () => (executions > ran ? true : undefined), 'the third batch', 2_000);
  holdDurable = undefined;
  release();
  const [ra, rb, rc] = await Promise.all([a, b, c]);
  assert.equal(answer(ra.results[0]!).code, 201);
  assert.equal(answer(rb.results[0]!).code, 500);
  const third = answer(rc.results[0]!);
  assert.equal(third.code, 409, "the first batch's create still occupies the name");
  assert.deepEqual(
    [...ra.events, ...rb.events, ...rc.events].map((e) => e.name),
    ['kept'],
  );
});
