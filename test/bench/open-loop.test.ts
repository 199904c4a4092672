/**
 * The bench's open loop (issue 20 item 8): no request is sent before its due time, so every
 * latency counted from the due time is positive (the latency CDF cannot start with zeros).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openLoop, untilDue } from '../../bench/load/engine.js';

test('open loop: no early send, no zero or negative latency', async () => {
  const early: number[] = [];
  const latencies: number[] = [];
  const ctl = new AbortController();
  const stop = setTimeout(() => ctl.abort(), 10_000);
  const r = await openLoop({
    qps: 2000,
    maxRequests: 400,
    maxInFlight: 64,
    signal: ctl.signal,
    async step(i, due) {
      const sentAt = performance.now();
      if (sentAt < due) early.push(i);
      await Promise.resolve();
      latencies.push(performance.now() - due);
    },
  });
  clearTimeout(stop);
  assert.equal(r.sent, 400);
  assert.deepEqual(early, [], `${early.length} requests sent before their due time`);
  assert.equal(latencies.filter((l) => !(l > 0)).length, 0, 'every latency is positive');
});

test('untilDue never resolves early, also for waits under a millisecond', async () => {
  for (const ms of [0.2, 0.9, 1.5, 3.3, 7.7]) {
    const due = performance.now() + ms;
    await untilDue(due);
    assert.ok(performance.now() >= due, `${ms} ms`);
  }
});
