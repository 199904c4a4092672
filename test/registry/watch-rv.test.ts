import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { openWatch, api, names, pool, until, type WatchClient, type WatchEvent } from '../helpers/watch.js';

const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const rvOf = (o: any) => Number(o.metadata.resourceVersion);
const itemsOf = (l: any) => l.items.map((o: any) => `${o.metadata.name}:${o.data.k}`);

function assertTooLarge(r: { status: number; headers: Headers; json: any }, what: string): void {
  assert.equal(r.status, 504, what);
  assert.match(String(r.headers.get('retry-after')), /^\d+$/, `${what}: Retry-After`);
  assert.match(r.json.message, /Too large resource version/, what);
}

async function assert400(base: string, path: string, pattern: RegExp): Promise<void> {
  const r = await request(base, 'GET', path);
  assert.equal(r.status, 400, path);
  assert.equal(r.json.reason, 'BadRequest', path);
  assert.match(r.json.message, pattern, path);
}

describe('resourceVersion semantics', () => {
  let s: TestServer;
  let a: ReturnType<typeof api>;
  const open: WatchClient[] = [];
  const watch = async (path: string) => {
    const w = await openWatch(s.url, path);
    open.push(w);
    return w;
  };
  /** state: o1..o3 created, then at R: o1 modified, o2 deleted, o4 created */
  let R = 0;
  before(async () => {
    s = await startServer();
    a = api(s.url);
    await a.namespace('rv');
    for (const n of ['o1', 'o2', 'o3']) await a.create('rv', n);
    R = Number(await a.rv());
    await a.update('rv', 'o1', { k: 'v2' });
    await a.remove('rv', 'o2');
    await a.create('rv', 'o4');
  });
  after(async () => {
    for (const w of open) w.close();
    await s.stop();
    s.cleanup();
  });

  it('get: unset, "0" and not-older-than serve the object; too large is 504; invalid is 400', async () => {
    for (const q of ['', '?resourceVersion=0', `?resourceVersion=${R}`, '?resourceVersion=1']) {
      const r = await request(s.url, 'GET', `${CM('rv')}/o1${q}`);
      assert.equal(r.status, 200, q);
      assert.equal(r.json.data.k, 'v2', `${q}: not older than the newest state`);
    }
    assertTooLarge(await request(s.url, 'GET', `${CM('rv')}/o1?resourceVersion=${R + 1_000_000}`), 'get');
    await assert400(s.url, `${CM('rv')}/o1?resourceVersion=abc`, /resourceVersion/);
  });

  it('list, match unset: most recent, any, not older than, exact with limit, continue token', async () => {
    const newest = ['o1:v2', 'o3:v', 'o4:v'];
    const unset = await a.list('rv');
    assert.deepEqual(itemsOf(unset), newest);
    assert.ok(rvOf(unset) >= R + 3);
    assert.deepEqual(itemsOf(await a.list('rv', 'resourceVersion=0')), newest);
    // limit without a version: most recent; limit with "0": any
    const first = await a.list('rv', 'limit=2');
    assert.deepEqual(itemsOf(first), newest.slice(0, 2));
    assert.ok(rvOf(first) >= R + 3);
    assert.deepEqual(itemsOf(await a.list('rv', 'resourceVersion=0&limit=2')), newest.slice(0, 2));
    const notOlder = await a.list('rv', `resourceVersion=${R}`);
    assert.deepEqual(itemsOf(notOlder), newest);
    assert.ok(rvOf(notOlder) >= R);
    // limit + non-zero version: Exact, served from history, every chunk at the requested version
    const c1 = await a.list('rv', `resourceVersion=${R}&limit=2`);
    assert.deepEqual(itemsOf(c1), ['o1:v', 'o2:v']);
    assert.equal(c1.metadata.resourceVersion, String(R));
    assert.ok(c1.metadata.continue);
    const c2 = await a.list('rv', `limit=2&continue=${c1.metadata.continue}`);
    assert.deepEqual(itemsOf(c2), ['o3:v']);
    assert.equal(c2.metadata.resourceVersion, String(R));
    // continue with "0" is treated as the continue token
    const c0 = await a.list('rv', `limit=2&resourceVersion=0&continue=${c1.metadata.continue}`);
    assert.deepEqual(itemsOf(c0), ['o3:v']);
    await assert400(s.url, `${CM('rv')}?limit=2&resourceVersion=${R}&continue=${c1.metadata.continue}`, /continue/);
    await assert400(
      s.url,
      `${CM('rv')}?limit=2&resourceVersionMatch=NotOlderThan&continue=${c1.metadata.continue}`,
      /resourceVersionMatch/,
    );
  });

  it('list, resourceVersionMatch=Exact: the collection as it was, metadata.resourceVersion equal to the request', async () => {
    for (const q of ['', '&limit=5']) {
      const l = await a.list('rv', `resourceVersionMatch=Exact&resourceVersion=${R}${q}`);
      assert.deepEqual(itemsOf(l), ['o1:v', 'o2:v', 'o3:v'], q);
      assert.equal(l.metadata.resourceVersion, String(R));
    }
    const chunk = await a.list('rv', `resourceVersionMatch=Exact&resourceVersion=${R}&limit=1`);
    assert.deepEqual(itemsOf(chunk), ['o1:v']);
    assert.equal(chunk.metadata.remainingItemCount, 2);
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=Exact`,
      /resourceVersionMatch is forbidden unless resourceVersion/,
    );
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=Exact&limit=1`,
      /resourceVersionMatch is forbidden unless resourceVersion/,
    );
    await assert400(s.url, `${CM('rv')}?resourceVersionMatch=Exact&resourceVersion=0`, /Exact.*resourceVersion "0"/);
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=Exact&resourceVersion=0&limit=1`,
      /Exact.*resourceVersion "0"/,
    );
  });

  it('list, resourceVersionMatch=NotOlderThan: any for "0", not older than otherwise; invalid values are 400', async () => {
    const newest = ['o1:v2', 'o3:v', 'o4:v'];
    for (const q of [
      'resourceVersion=0',
      `resourceVersion=${R}`,
      'resourceVersion=0&limit=5',
      `resourceVersion=${R}&limit=5`,
    ]) {
      const l = await a.list('rv', `resourceVersionMatch=NotOlderThan&${q}`);
      assert.deepEqual(itemsOf(l), newest, q);
      assert.ok(rvOf(l) >= R, q);
    }
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=NotOlderThan`,
      /resourceVersionMatch is forbidden unless resourceVersion/,
    );
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=NotOlderThan&limit=1`,
      /resourceVersionMatch is forbidden unless resourceVersion/,
    );
    await assert400(
      s.url,
      `${CM('rv')}?resourceVersionMatch=Newest&resourceVersion=${R}`,
      /Unsupported value: "Newest"/,
    );
    await assert400(s.url, `${CM('rv')}?resourceVersion=abc`, /resourceVersion/);
  });

  it('list of a version newer than the server has seen: 504 with Retry-After and "Too large resource version"', async () => {
    const future = R + 1_000_000;
    const queries = [
      `resourceVersion=${future}`,
      `resourceVersion=${future}&limit=1`,
      `resourceVersionMatch=Exact&resourceVersion=${future}`,
      `resourceVersionMatch=NotOlderThan&resourceVersion=${future}`,
    ];
    // each waits the server's few seconds for the version before its 504: at once, not one after another
    const replies = await Promise.all(queries.map((q) => request(s.url, 'GET', `${CM('rv')}?${q}`)));
    queries.forEach((q, i) => assertTooLarge(replies[i]!, q));
  });

  it('watch: unset and "0" get state then start; a non-zero version starts exactly after it', async () => {
    for (const q of ['', '&resourceVersion=0']) {
      const w = await watch(`${CM('rv')}?watch=1${q}`);
      await w.waitEvents(3);
      assert.deepEqual(names(w.events), ['ADDED o1', 'ADDED o3', 'ADDED o4'], q);
      assert.equal(w.events[0]!.object.data.k, 'v2');
    }
    const exact = await watch(`${CM('rv')}?watch=1&resourceVersion=${R}`);
    await exact.waitEvents(3);
    assert.deepEqual(names(exact.events), ['MODIFIED o1', 'DELETED o2', 'ADDED o4']);
    await assert400(
      s.url,
      `${CM('rv')}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=${R}`,
      /unless sendInitialEvents is provided/,
    );
    await assert400(
      s.url,
      `${CM('rv')}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=${R}`,
      /Unsupported value: "Exact"/,
    );
    await assert400(s.url, `${CM('rv')}?watch=1&resourceVersion=abc`, /resourceVersion/);
  });

  it('watch from a version not reached yet waits for it, then sends what follows', async () => {
    await a.namespace('fut');
    const now = Number(await a.rv());
    const w = await watch(`${CM('fut')}?watch=1&resourceVersion=${now + 3}`);
    const rvs: number[] = [];
    for (let i = 1; i <= 5; i++) rvs.push(rvOf(await a.create('fut', `f${i}`)));
    // the server's own writers (leader-election lease renewals, controllers) may take versions
    // in between: the watch sends exactly the creates after version now+3
    const after = rvs
      .map((rv, i) => [rv, `ADDED f${i + 1}`] as const)
      .filter(([rv]) => rv > now + 3)
      .map(([, n]) => n);
    assert.ok(after.length >= 2 && after.length <= 3, `f4 and f5 at least come after now+3: ${rvs.join(',')}`);
    await w.waitFor((evs) => names(evs).includes('ADDED f5'), 'f5');
    assert.deepEqual(names(w.events), after);
  });

  it('streaming list of a version not reached yet waits for it, or answers 504 after a few seconds', async () => {
    await a.namespace('sfut');
    const now = Number(await a.rv());
    const q = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
    const pending = openWatch(s.url, `${CM('sfut')}?${q}&resourceVersion=${now + 1}`, 10_000);
    await a.create('sfut', 'arrives');
    const w = await pending;
    open.push(w);
    await w.waitEvents(2);
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
    const started = Date.now();
    assertTooLarge(
      await request(s.url, 'GET', `${CM('sfut')}?${q}&resourceVersion=${now + 1_000_000}`),
      'streaming list',
    );
    assert.ok(Date.now() - started >= 2500, 'waited before giving up');
  });

  it('replays every change after R in order, once; other namespaces filtered; DELETED carries the final state', async () => {
    await a.namespace('rp-a');
    await a.namespace('rp-b');
    const from = await a.rv();
    await a.create('rp-a', 'a1');
    await a.create('rp-b', 'b1');
    const last = await a.update('rp-a', 'a1', { k: 'a-final' });
    await a.update('rp-b', 'b1', { k: 'b2' });
    const del = await a.remove('rp-a', 'a1');
    // as upstream, deleting a ConfigMap answers with a Success Status naming it
    assert.equal(del.status, 'Success');
    await a.remove('rp-b', 'b1');
    await a.create('rp-a', 'a2');
    const one = await watch(`${CM('rp-a')}?watch=1&resourceVersion=${from}`);
    const all = await watch(`/api/v1/configmaps?watch=1&resourceVersion=${from}`);
    await all.waitEvents(7);
    assert.deepEqual(names(all.events), [
      'ADDED a1',
      'ADDED b1',
      'MODIFIED a1',
      'MODIFIED b1',
      'DELETED a1',
      'DELETED b1',
      'ADDED a2',
    ]);
    assertIncreasing(all.events);
    await one.waitFor((evs) => names(evs).includes('ADDED a2'), 'a2');
    assert.deepEqual(names(one.events), ['ADDED a1', 'MODIFIED a1', 'DELETED a1', 'ADDED a2']);
    const deleted = one.events[2]!.object;
    assert.equal(deleted.data.k, 'a-final');
    assert.ok(rvOf(deleted) > rvOf(last), 'the deletion has its own, newer resourceVersion');
    assert.equal(deleted.metadata.uid, del.details.uid);
  });

  it('list at R then watch from R sees every later change exactly once under concurrent writes', async () => {
    await a.namespace('cc');
    const writes: { rv: number }[] = [];
    let listed: any;
    let w: WatchClient | undefined;
    const ops = Array.from({ length: 400 }, (_, i) => i);
    await pool(ops, 32, async (i) => {
      const n = `c${i % 150}`;
      // a delete answers with a Status (no resourceVersion): deletes are checked by name below
      if (i >= 350) await a.remove('cc', `c${i - 350}`);
      else writes.push({ rv: rvOf(i < 150 ? await a.create('cc', n) : await a.update('cc', n, { k: `u${i}` })) });
      if (writes.length === 120) {
        listed = await a.list('cc');
        w = await watch(`${CM('cc')}?watch=1&resourceVersion=${listed.metadata.resourceVersion}`);
      }
    });
    const R0 = rvOf(listed);
    const expected = writes
      .map((x) => x.rv)
      .filter((rv) => rv > R0)
      .sort((x, y) => x - y);
    assert.ok(expected.length > 150, `${expected.length} writes after the list`);
    await w!.waitEvents(expected.length + 50, 20_000);
    assert.deepEqual(
      w!.events.filter((e) => e.type !== 'DELETED').map((e) => rvOf(e.object)),
      expected,
    );
    assert.deepEqual(
      w!.events
        .filter((e) => e.type === 'DELETED')
        .map((e) => e.object.metadata.name)
        .sort(),
      Array.from({ length: 50 }, (_, i) => `c${i}`).sort(),
    );
    assertIncreasing(w!.events);
    // the list plus the events rebuild the final state
    const state = new Map<string, string>(listed.items.map((o: any) => [o.metadata.name, o.metadata.resourceVersion]));
    for (const e of w!.events) {
      if (e.type === 'DELETED') state.delete(e.object.metadata.name);
      else state.set(e.object.metadata.name, e.object.metadata.resourceVersion);
    }
    const final = await a.list('cc');
    assert.deepEqual(
      [...state].sort(),
      final.items.map((o: any) => [o.metadata.name, o.metadata.resourceVersion]).sort(),
    );
  });

  it('reconnecting from the last seen version under concurrent writes: no gap, no duplicate', async () => {
    await a.namespace('rc');
    const start = Number(await a.rv());
    const TOTAL = 500;
    const written: number[] = [];
    const writer = pool(
      Array.from({ length: TOTAL }, (_, i) => i),
      24,
      async (i) => {
        if (i >= 400) await a.remove('rc', `r${i - 400}`);
        else
          written.push(
            rvOf(i < 200 ? await a.create('rc', `r${i}`) : await a.update('rc', `r${i - 200}`, { k: `u${i}` })),
          );
      },
    );
    const seen: WatchEvent[] = [];
    let last = start;
    let reconnects = 0;
    const deadline = Date.now() + 30_000;
    for (let round = 0; round < 200 && Date.now() < deadline && seen.length < TOTAL; round++) {
      const w = await openWatch(s.url, `${CM('rc')}?watch=1&resourceVersion=${last}`);
      const want = 20 + (round % 5) * 10;
      await w.waitFor((evs) => evs.length >= want || seen.length + evs.length >= TOTAL, `${want} events`, 10_000);
      w.close();
      // close() stops the parser at once: these are exactly the events this connection delivered
      seen.push(...w.events);
      if (w.events.length) last = rvOf(w.events.at(-1)!.object);
      reconnects++;
    }
    await writer;
    assert.ok(reconnects >= 5, `${reconnects} reconnects`);
    assert.deepEqual(
      seen.filter((e) => e.type !== 'DELETED').map((e) => rvOf(e.object)),
      [...written].sort((x, y) => x - y),
    );
    assert.equal(new Set(seen.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name)).size, 100);
    assertIncreasing(seen);
  });
});

function assertIncreasing(evs: WatchEvent[]): void {
  for (let i = 1; i < evs.length; i++) assert.ok(rvOf(evs[i]!.object) > rvOf(evs[i - 1]!.object), `rv order at ${i}`);
}

describe('resourceVersion outside the retained window', () => {
  let s: TestServer;
  let a: ReturnType<typeof api>;
  before(async () => {
    s = await startServer(['--watch-history-window', '1s']);
    a = api(s.url);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('watch from a version older than the window: a 200 stream with one ERROR event (410 Expired), then the end', async () => {
    await a.namespace('old');
    const from = await a.rv();
    await a.create('old', 'after');
    // the change after `from` leaves the 1 s window with time: wait for that expiry
    const w = await until(
      async () => {
        const c = await openWatch(s.url, `${CM('old')}?watch=1&resourceVersion=${from}`);
        await c.waitFor((evs) => evs.length > 0, 'one event');
        c.close();
        return c.events[0]!.type === 'ERROR' ? c : undefined;
      },
      'the history window to pass',
      5000,
      100,
    );
    assert.equal(w.status, 200);
    assert.equal(w.events.length, 1);
    const st = w.events[0]!.object;
    assert.equal(st.kind, 'Status');
    assert.equal(st.code, 410);
    assert.equal(st.reason, 'Expired');
    assert.match(st.message, /too old resource version/);
    const again = await openWatch(s.url, `${CM('old')}?watch=1&resourceVersion=${from}`);
    await again.waitClosed(5000);
    assert.equal(again.ended, true, 'the stream ends after the ERROR event');
    // an exact list of that version is gone too
    const l = await request(s.url, 'GET', `${CM('old')}?resourceVersionMatch=Exact&resourceVersion=${from}`);
    assert.equal(l.status, 410);
    assert.equal(l.json.reason, 'Expired');
  });

  it('after a restart, versions before it are gone (410) and newer ones still watch', async () => {
    await a.namespace('rs');
    const beforeRestart = await a.rv();
    await a.create('rs', 'x');
    await s.stop();
    s = await startServer(['--watch-history-window', '1s'], s.dataDir);
    a = api(s.url);
    const old = await openWatch(s.url, `${CM('rs')}?watch=1&resourceVersion=${beforeRestart}`);
    await old.waitClosed(5000);
    assert.equal(old.events[0]?.object.code, 410);
    const now = await a.rv();
    const w = await openWatch(s.url, `${CM('rs')}?watch=1&resourceVersion=${now}`);
    await a.update('rs', 'x', { k: 'after-restart' });
    await w.waitEvents(1);
    assert.deepEqual(names(w.events), ['MODIFIED x']);
    w.close();
  });
});
