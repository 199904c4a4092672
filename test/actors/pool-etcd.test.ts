/**
 * On etcd each batch a shard sends is a transaction of its own: beside a batch in flight the
 * pool sends the queue only once PIPELINE_MIN_OPS ops wait (an idle poll never holds it back).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PIPELINE_MIN_OPS, sendsBeside, type Pending } from '../../src/actors/pool.js';

const queue = (n: number): Pending[] => Array.from({ length: n }, () => ({}) as Pending);

test('a shard on etcd sends a second batch beside one in flight only once PIPELINE_MIN_OPS ops wait', () => {
  assert.equal(PIPELINE_MIN_OPS, 16);
  assert.equal(sendsBeside({ inFlight: [], polling: false, queue: queue(1) }), true, 'nothing in flight');
  assert.equal(sendsBeside({ inFlight: [7], polling: true, queue: queue(1) }), true, 'only the idle poll in flight');
  assert.equal(sendsBeside({ inFlight: [7], polling: false, queue: queue(PIPELINE_MIN_OPS - 1) }), false);
  assert.equal(sendsBeside({ inFlight: [7], polling: false, queue: queue(PIPELINE_MIN_OPS) }), true);
});
