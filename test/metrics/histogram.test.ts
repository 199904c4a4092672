import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram } from '../../src/metrics/histogram.js';

test('a histogram writes cumulative buckets, +Inf, sum and count', () => {
  const h = new Histogram([1, 2, 4]);
  for (const v of [1, 1.5, 3, 9]) h.observe(v);
  const out: string[] = [];
  h.lines('x', 'a="b"', out);
  assert.deepEqual(out, [
    'x_bucket{a="b",le="1"} 1',
    'x_bucket{a="b",le="2"} 2',
    'x_bucket{a="b",le="4"} 3',
    'x_bucket{a="b",le="+Inf"} 4',
    'x_sum{a="b"} 14.5',
    'x_count{a="b"} 4',
  ]);
});
