/**
 * A watch flush written in slices (src/http/watch-flush.ts, src/http/watch-budget.ts): what
 * happens between slices (dispatches, bookmarks, new watchers, a slow member) changes neither
 * order nor completeness, and a scheduled flush gives the event loop back between slices.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WatchHub } from '../../src/http/watch-hub.js';
import type { Budget } from '../../src/http/watch-budget.js';
import { event, rvs, watcher, type Seen } from '../helpers/hub-watchers.js';
import { until } from '../helpers/poll.js';

/** A budget of n sends (each group or solo watcher visited asks once). */
function sends(n: number): Budget {
  return { more: () => n-- > 0 };
}

const range = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_v, i) => String(from + i));

/** The event rvs and bookmarks a watcher got, in order. */
const seq = (s: Seen): string[] => s.lines.map((l) => `${l.type === 'BOOKMARK' ? 'B' : 'E'}${l.rv}`);

describe('WatchHub flush in slices', () => {
  it('every watcher gets each event once, in rv order, with dispatches, a bookmark and a new watcher between slices', () => {
    const hub = new WatchHub(1 << 20);
    const grouped = Array.from({ length: 6 }, () => watcher({ bookmarks: true }));
    const solo = Array.from({ length: 4 }, () => watcher({ matcher: () => true, bookmarks: true }));
    for (const s of [...grouped, ...solo]) hub.add(s.w);
    let rv = 100;
    hub.dispatch([event(++rv), event(++rv)]);
    hub.flush(sends(3));
    // the first slice reached some watchers only
    assert.ok(grouped.some((s) => s.lines.length === 0));
    let late: Seen | undefined;
    let marked = 0;
    for (let round = 0; round < 12; round++) {
      hub.dispatch([event(++rv)]);
      if (round === 4) {
        marked = rv;
        hub.bookmark(() => rv);
      }
      if (round === 6) {
        late = watcher({ fromRV: rv - 1, startRV: rv - 1 });
        hub.add(late.w);
      }
      hub.flush(sends(3));
    }
    hub.flush();
    for (const s of [...grouped, ...solo]) {
      assert.deepEqual(rvs(s), range(101, rv));
      // the bookmark right behind the events up to its version, before any later one
      const i = seq(s).indexOf(`B${marked}`);
      assert.equal(seq(s)[i - 1], `E${marked}`);
      assert.equal(seq(s)[i + 1], `E${marked + 1}`);
    }
    assert.ok(late);
    assert.deepEqual(rvs(late), range(late.w.startRV + 1, rv));
  });

  // the same scenario for group members (plain watchers) and solo watchers (a selector)
  for (const [title, over] of [
    ['frames dispatched during a flush reach the members it has yet to reach with it, in one write', {}],
    [
      'a solo watcher (selector) not yet written gets the frames dispatched during the flush with its own',
      { matcher: () => true },
    ],
  ] as const) {
    it(title, () => {
      const hub = new WatchHub(1 << 20);
      const ws = Array.from({ length: 4 }, () => watcher(over));
      const writes = ws.map(() => 0);
      ws.forEach((s, i) => {
        const write = s.w.sink.write;
        s.w.sink.write = (c) => {
          writes[i]!++;
          return write(c);
        };
        hub.add(s.w);
      });
      hub.dispatch([event(1)]);
      hub.flush(sends(2));
      hub.dispatch([event(2)]);
      hub.flush(sends(10));
      assert.deepEqual(ws.map(rvs), [['1'], ['1'], ['1', '2'], ['1', '2']]);
      assert.deepEqual(writes, [1, 1, 1, 1]);
      hub.flush();
      for (const s of ws) assert.deepEqual(rvs(s), ['1', '2']);
      assert.deepEqual(writes, [2, 2, 1, 1]);
    });
  }

  it('a member cut off as slow in a later slice leaves the others all their frames', () => {
    const hub = new WatchHub(100);
    const ws = Array.from({ length: 6 }, () => watcher());
    const slow = ws[4]!;
    slow.w.sink.write = () => 1000;
    for (const s of ws) hub.add(s.w);
    hub.dispatch([event(40), event(41)]);
    hub.flush(sends(2));
    assert.equal(slow.closed, false);
    hub.dispatch([event(42)]);
    hub.flush();
    assert.equal(slow.closed, true);
    assert.equal(hub.slowClosed, 1);
    hub.flush();
    for (const s of ws) if (s !== slow) assert.deepEqual(rvs(s), ['40', '41', '42']);
    assert.equal(hub.count, 5);
  });

  it('a scheduled flush of a slow fan-out returns to the event loop between slices', async () => {
    const hub = new WatchHub(1 << 20);
    const N = 300;
    let writes = 0;
    let atYield: number | undefined;
    for (let i = 0; i < N; i++) {
      const s = watcher();
      const write = s.w.sink.write;
      s.w.sink.write = (c) => {
        // a send of 50 µs: the whole fan-out takes ~15 ms, several slices
        const end = performance.now() + 0.05;
        while (performance.now() < end);
        // queued behind the running slice: runs when the loop turns (timers, I/O, immediates)
        if (writes++ === 0) setImmediate(() => (atYield = writes));
        return write(c);
      };
      hub.add(s.w);
    }
    hub.dispatch([event(1)]);
    await until(async () => (writes === N && atYield !== undefined ? true : undefined), 'the fan-out');
    assert.ok(atYield! > 0 && atYield! < N, `the loop turned after ${atYield} of ${N} sends`);
  });
});
