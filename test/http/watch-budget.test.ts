/**
 * The pacing of the watch hub's flushes (src/http/watch-budget.ts paceWait): the next flush
 * waits until the front has spent as long on other work as on the last flush, counting the
 * gaps between that flush's slices (I/O, replies, requests) as such work, and at most
 * MAX_PACE_MS. Pure arithmetic on the figures given: no clock is read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PACE_MS, paceWait } from '../../src/http/watch-budget.js';

describe('watch flush pacing', () => {
  it('a flush written in one go (no gaps) is followed by a wait as long as it took', () => {
    assert.equal(paceWait(4, 4, 0), 4);
    // the time since it ended counts
    assert.equal(paceWait(4, 4, 3), 1);
  });

  it('the wait never exceeds MAX_PACE_MS', () => {
    assert.equal(paceWait(40, 40, 0), MAX_PACE_MS);
    assert.equal(paceWait(40, 40, 2), MAX_PACE_MS - 2);
  });

  it('the gaps between a flush’s slices count as the other work the wait leaves room for', () => {
    // 8 ms in slices over a 12 ms wall: 4 ms of other work already done, 4 ms left to wait
    assert.equal(paceWait(8, 12, 0), 4);
    // a flush whose gaps were as long as its slices: the next one may begin at once
    assert.ok(paceWait(8, 16, 0) < 1);
    assert.ok(paceWait(8, 30, 0) < 1);
    // a costly flush with a few gaps still waits the cap at most, less its gaps
    assert.equal(paceWait(30, 33, 0), MAX_PACE_MS);
    assert.equal(paceWait(9, 13, 0), 5);
  });
});
