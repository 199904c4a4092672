import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takeBatch, type Pending } from '../../src/actors/pool.js';
import type { Op } from '../../src/actors/protocol.js';

const type = { group: '', version: 'v1', resource: 'configmaps' };
const enc = { format: 'json' as const, pretty: false };
let id = 0;
const op = (o: Record<string, unknown>): Pending => ({
  op: { id: id++, type, enc, namespace: 'ns', ...o } as unknown as Op,
  resolve: () => {},
});
const list = (limit?: number) => op({ op: 'list', opts: limit === undefined ? {} : { limit } });
const get = () => op({ op: 'get', name: 'x' });
const del = () => op({ op: 'deletecollection', opts: {}, options: {} });

test('a batch takes every small op but at most four heavy ones, in arrival order', () => {
  const queue: Pending[] = [list(), list(), list(), get(), list(), list(), list(10), get(), del(), list(1000)];
  const s = { queue: [...queue] };
  const batch = takeBatch(s);
  // heavy: whole LISTs, LISTs with a limit above 250, DELETE collection
  assert.deepEqual(
    batch.map((p) => p.op.id),
    [0, 1, 2, 3, 4, 6, 7].map((i) => queue[i]!.op.id),
  );
  assert.deepEqual(
    s.queue.map((p) => p.op.id),
    [5, 8, 9].map((i) => queue[i]!.op.id),
  );
  const next = takeBatch(s);
  assert.equal(next.length, 3);
  assert.deepEqual(s.queue, []);
});

test('the heavy cap is a pool option (--actor-heavy-per-batch), not an environment variable', () => {
  const queue: Pending[] = [list(), list(), get(), list(), del()];
  const s = { queue: [...queue] };
  assert.deepEqual(
    takeBatch(s, 1).map((p) => p.op.id),
    [0, 2].map((i) => queue[i]!.op.id),
  );
  assert.deepEqual(takeBatch(s, 100).length, 3);
});
