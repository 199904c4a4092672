/**
 * Patch amplification (issue 18 item 5): a small patch must not make the shard actor build a
 * huge object or spend quadratic time. JSON patch copies are bounded as upstream bounds them
 * (422 past 3 MiB copied, 413 past 10,000 operations); move/add chains and strategic merge
 * list growth stay within a wall-clock budget, and the shard keeps serving afterwards.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';
before(async () => {
  s = await startServer();
  for (const name of ['amp', 'fin'])
    assert.equal((await request(s.url, 'POST', CM, { metadata: { name }, data: { k: 'v' } })).status, 201);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
/** what one amplified request may take; the unbounded versions take minutes or kill the actor */
const BUDGET_MS = 10_000;

async function timed(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const t0 = Date.now();
  const r = await request(s.url, method, path, typeof body === 'string' ? body : JSON.stringify(body), headers);
  return { ...r, ms: Date.now() - t0 };
}

/** the shard of ConfigMaps still answers, and quickly */
async function shardServes(name: string): Promise<void> {
  const t0 = Date.now();
  const r = await request(s.url, 'GET', `${CM}/${name}`);
  assert.equal(r.status, 200, r.text);
  assert.ok(Date.now() - t0 < BUDGET_MS, 'the shard answered in time');
}

test("copy chain: 24 doublings of a 2 KB array is 422 with upstream's message, and the shard lives on", async () => {
  const ops = [
    { op: 'add', path: '/x', value: ['a'.repeat(2000)] },
    ...Array.from({ length: 24 }, () => ({ op: 'copy', from: '/x', path: '/x/-' })),
  ];
  const r = await timed('PATCH', `${CM}/amp?dryRun=All`, ops, JSON_PATCH);
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.reason, 'Invalid');
  assert.match(
    r.json.message,
    /^the server rejected our request due to an error in our request: Unable to complete the copy, the accumulated size increase of copy is [0-9]+, exceeding the limit 3145728$/,
  );
  assert.ok(r.ms < BUDGET_MS, `took ${r.ms} ms`);
  await shardServes('amp');
});

test('copies under the limit still apply (the bound counts bytes copied, not operations)', async () => {
  const ops = [
    { op: 'add', path: '/data/a', value: 'x'.repeat(1000) },
    ...Array.from({ length: 50 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` })),
  ];
  const r = await timed('PATCH', `${CM}/amp?dryRun=All`, ops, JSON_PATCH);
  assert.equal(r.status, 200, r.text);
  assert.equal(Object.keys(r.json.data).length, 52);
});

test('more than 10,000 operations is 413 as upstream', async () => {
  const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'amp' }));
  const r = await timed('PATCH', `${CM}/amp?dryRun=All`, ops, JSON_PATCH);
  assert.equal(r.status, 413, r.text);
  assert.equal(r.json.reason, 'RequestEntityTooLarge');
  assert.equal(
    r.json.message,
    'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
  );
});

test('move and add chains over a large array are refused quickly; short ones apply', async () => {
  const big = Array.from({ length: 200_000 }, () => 1);
  const moves = (n: number) => Array.from({ length: n }, () => ({ op: 'move', from: '/x/0', path: '/x/-' }));
  const adds = (n: number) => Array.from({ length: n }, () => ({ op: 'add', path: '/x/0', value: 2 }));
  for (const chain of [moves(9_000), adds(9_000)]) {
    const r = await timed(
      'PATCH',
      `${CM}/amp?dryRun=All`,
      [{ op: 'add', path: '/x', value: big }, ...chain],
      JSON_PATCH,
    );
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.equal(
      r.json.message,
      'the server rejected our request due to an error in our request: the patch moves more than 50000000 array elements: split it into smaller patches',
    );
    assert.ok(r.ms < BUDGET_MS, `chain took ${r.ms} ms`);
  }
  const small = Array.from({ length: 1_000 }, () => 1);
  const r = await timed(
    'PATCH',
    `${CM}/amp?dryRun=All`,
    [{ op: 'add', path: '/x', value: small }, ...moves(4_000), ...adds(4_000), { op: 'remove', path: '/x' }],
    JSON_PATCH,
  );
  assert.equal(r.status, 200, r.text.slice(0, 300));
  await shardServes('amp');
});

test('strategic merge list growth (keyed and primitive lists) costs about what a merge patch of the same list costs', async () => {
  const n = 20_000;
  const lists = {
    ownerReferences: Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'X', name: 'o', uid: `u${i}` })),
    finalizers: Array.from({ length: n }, (_, i) => `example.com/f${i}`),
  };
  for (const [field, list] of Object.entries(lists)) {
    const body = { metadata: { [field]: list } };
    // the baseline: a merge patch replaces the list (linear), then the same validation and field tracking
    const base = await timed('PATCH', `${CM}/fin?dryRun=All`, body, { 'content-type': 'application/merge-patch+json' });
    assert.ok(base.status < 500, base.text.slice(0, 300));
    const smp = await timed('PATCH', `${CM}/fin?dryRun=All`, body, SMP);
    assert.ok(smp.status < 500, smp.text.slice(0, 300));
    assert.equal(smp.status, base.status);
    assert.ok(smp.ms < 2 * base.ms + 300, `${field}: strategic ${smp.ms} ms, merge ${base.ms} ms`);
  }
  await shardServes('fin');
});
