import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WatchHub } from '../../src/http/watch-hub.js';
import { event, rvs, watcher } from '../helpers/hub-watchers.js';

describe('WatchHub groups (watchers sharing their frames)', () => {
  it('a watcher flushed early for a bookmark gets its frames once, before the bookmark, and never a bookmark behind them', () => {
    const hub = new WatchHub(1 << 20);
    const plain = watcher();
    const marked = watcher({ bookmarks: true });
    hub.add(plain.w);
    hub.add(marked.w);
    hub.dispatch([event(5), event(6)]);
    // a safe version behind what is queued: the frames go first, the stale bookmark not at all
    hub.bookmark(() => 5);
    hub.dispatch([event(7)]);
    hub.bookmark(() => 7);
    hub.flush();
    assert.deepEqual(
      marked.lines.map((l) => `${l.type} ${l.rv}`),
      ['MODIFIED 5', 'MODIFIED 6', 'MODIFIED 7', 'BOOKMARK 7'],
    );
    assert.deepEqual(rvs(plain), ['5', '6', '7']);
    hub.dispatch([event(8)]);
    hub.flush();
    assert.deepEqual(rvs(marked), ['5', '6', '7', '8']);
  });

  it('a watcher that registers between a dispatch and the flush gets each event once, in order', () => {
    const hub = new WatchHub(1 << 20);
    const early = watcher();
    hub.add(early.w);
    hub.dispatch([event(10), event(11)]);
    // registered from the state at 10: 11 is replayed at once, the queued frames skip it
    const late = watcher({ fromRV: 10, startRV: 10 });
    hub.add(late.w);
    hub.dispatch([event(12)]);
    hub.flush();
    assert.deepEqual(rvs(early), ['10', '11', '12']);
    assert.deepEqual(rvs(late), ['11', '12']);
  });

  it('groups by namespace beside watchers with selectors, each seeing what it asked for', () => {
    const hub = new WatchHub(1 << 20);
    const all = watcher();
    const inA = watcher({ namespace: 'a' });
    const inB = watcher({ namespace: 'b' });
    const selected = watcher({ matcher: (labels) => labels?.app === 'x' });
    for (const s of [all, inA, inB, selected]) hub.add(s.w);
    hub.dispatch([event(20, 'a'), event(21, 'b', { app: 'x' }), event(22, 'a', { app: 'x' })]);
    hub.flush();
    assert.deepEqual(rvs(all), ['20', '21', '22']);
    assert.deepEqual(rvs(inA), ['20', '22']);
    assert.deepEqual(rvs(inB), ['21']);
    // a selector watcher sees an update that starts matching as ADDED
    assert.deepEqual(
      selected.lines.map((l) => `${l.type} ${l.rv}`),
      ['ADDED 21', 'ADDED 22'],
    );
  });

  it('an object a group cannot be encoded in ends that group with an ERROR event after what it was due; other groups go on', () => {
    const hub = new WatchHub(1 << 20, (_t, apiVersion, json) => {
      if (apiVersion === 'v2' && json.includes('"31"')) throw new Error('no v2 for this one');
      return JSON.stringify({ ...JSON.parse(json), apiVersion });
    });
    const v1 = watcher();
    const v2a = watcher({ apiVersion: 'v2' });
    const v2b = watcher({ apiVersion: 'v2' });
    for (const s of [v1, v2a, v2b]) hub.add(s.w);
    hub.dispatch([event(30)]);
    hub.dispatch([event(31)]);
    hub.flush();
    hub.dispatch([event(32)]);
    hub.flush();
    assert.deepEqual(rvs(v1), ['30', '31', '32']);
    for (const s of [v2a, v2b]) {
      assert.deepEqual(
        s.lines.map((l) => `${l.type} ${l.rv || l.code}`),
        ['MODIFIED 30', 'ERROR 500'],
      );
      assert.equal(s.closed, true);
    }
    assert.equal(hub.count, 1);
  });

  it('a member cut off as slow during a flush leaves the others their frames', () => {
    const hub = new WatchHub(100);
    const fast = watcher();
    const slow = watcher();
    slow.w.sink.write = () => 1000;
    const after = watcher();
    for (const s of [fast, slow, after]) hub.add(s.w);
    hub.dispatch([event(40), event(41)]);
    hub.flush();
    assert.equal(slow.closed, true);
    assert.equal(hub.slowClosed, 1);
    assert.deepEqual(rvs(fast), ['40', '41']);
    assert.deepEqual(rvs(after), ['40', '41']);
    hub.dispatch([event(42)]);
    hub.flush();
    assert.deepEqual(rvs(after), ['40', '41', '42']);
    assert.equal(hub.count, 2);
  });
});
