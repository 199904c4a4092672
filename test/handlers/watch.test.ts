import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { openWatch, api, names, pool, type WatchClient } from '../helpers/watch.js';

const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

describe('watch streams', () => {
  let s: TestServer;
  let a: ReturnType<typeof api>;
  const open: WatchClient[] = [];
  const watch = async (path: string) => {
    const w = await openWatch(s.url, path);
    open.push(w);
    return w;
  };
  before(async () => {
    s = await startServer(['--bookmark-interval', '200ms']);
    a = api(s.url);
  });
  after(async () => {
    for (const w of open) w.close();
    await s.stop();
    s.cleanup();
  });

  it('watches one namespace or all namespaces, with watch=1 and watch=true', async () => {
    await a.namespace('w-a');
    await a.namespace('w-b');
    const rv = await a.rv();
    const one = await watch(`${CM('w-a')}?watch=1&resourceVersion=${rv}`);
    const all = await watch(`/api/v1/configmaps?watch=true&resourceVersion=${rv}`);
    await a.create('w-a', 'a1');
    await a.create('w-b', 'b1');
    await a.update('w-a', 'a1', { k: 'v2' });
    await a.remove('w-b', 'b1');
    await a.create('w-a', 'last');
    await all.waitFor((evs) => names(evs).includes('ADDED last'), 'the last create');
    assert.deepEqual(names(all.events), ['ADDED a1', 'ADDED b1', 'MODIFIED a1', 'DELETED b1', 'ADDED last']);
    await one.waitFor((evs) => names(evs).includes('ADDED last'), 'the last create');
    assert.deepEqual(names(one.events), ['ADDED a1', 'MODIFIED a1', 'ADDED last']);
    assert.ok(one.events.every((e) => e.object.metadata.namespace === 'w-a'));
    assert.equal(one.events[1]!.object.data.k, 'v2');
    // a request that is not a watch (watch=false) is a list
    const list = await request(s.url, 'GET', `${CM('w-a')}?watch=false`);
    assert.equal(list.json.kind, 'ConfigMapList');
  });

  it('watches one object by fieldSelector and by the legacy GET on its name', async () => {
    await a.namespace('w-one');
    await a.create('w-one', 'x');
    await a.create('w-one', 'y');
    const rv = await a.rv();
    const bySelector = await watch(`${CM('w-one')}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dx`);
    const legacy = await watch(`${CM('w-one')}/x?watch=1&resourceVersion=${rv}`);
    const legacyState = await watch(`${CM('w-one')}/x?watch=true`);
    await a.update('w-one', 'y', { k: 'y2' });
    await a.update('w-one', 'x', { k: 'x2' });
    await a.remove('w-one', 'y');
    await a.remove('w-one', 'x');
    for (const w of [bySelector, legacy]) {
      await w.waitFor((evs) => names(evs).includes('DELETED x'), 'DELETED x');
      assert.deepEqual(names(w.events), ['MODIFIED x', 'DELETED x']);
    }
    await legacyState.waitFor((evs) => names(evs).includes('DELETED x'), 'DELETED x');
    assert.deepEqual(names(legacyState.events), ['ADDED x', 'MODIFIED x', 'DELETED x']);
  });

  it('sends response headers at once for a watch with nothing to send yet', async () => {
    await a.namespace('w-empty');
    const rv = await a.rv();
    // openWatch resolves on the response headers (a Go client such as kubectl blocks until then)
    const w = await openWatch(s.url, `${CM('w-empty')}?watch=1&resourceVersion=${rv}`, 2000);
    open.push(w);
    assert.equal(w.status, 200);
    assert.match(String(w.headers['content-type']), /^application\/json/);
    assert.equal(w.headers['transfer-encoding'], 'chunked');
    await a.create('w-empty', 'first');
    await w.waitEvents(1);
    assert.deepEqual(names(w.events), ['ADDED first']);
  });

  it('label selector transitions yield ADDED and DELETED as the object starts or stops matching', async () => {
    await a.namespace('w-sel');
    const rv = await a.rv();
    const w = await watch(`${CM('w-sel')}?watch=1&resourceVersion=${rv}&labelSelector=app%3Dweb`);
    await a.create('w-sel', 'other', { app: 'db' });
    await a.create('w-sel', 'o', { app: 'web' });
    await a.update('w-sel', 'o', { k: '2' });
    await a.update('w-sel', 'o', { k: '3' }, { app: 'api' });
    await a.update('w-sel', 'o', { k: '4' });
    await a.update('w-sel', 'o', { k: '5' }, { app: 'web' });
    await a.update('w-sel', 'other', { k: '6' });
    await a.remove('w-sel', 'o');
    await w.waitFor((evs) => evs.length >= 5, '5 events');
    // as upstream: the DELETED of a transition carries the previous state (the last one the
    // watcher matched) at the resourceVersion of the change that made it stop matching
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.object.data.k}`),
      ['ADDED v', 'MODIFIED 2', 'DELETED 2', 'ADDED 5', 'DELETED 5'],
    );
    assert.deepEqual(w.events[2]!.object.metadata.labels, { app: 'web' });
    assert.ok(
      Number(w.events[2]!.object.metadata.resourceVersion) > Number(w.events[1]!.object.metadata.resourceVersion),
    );
  });

  it('field selector transitions (pod status.phase) yield ADDED and DELETED', async () => {
    await a.namespace('w-fsel');
    const rv = await a.rv();
    const path = '/api/v1/namespaces/w-fsel/pods';
    const w = await watch(`${path}?watch=1&resourceVersion=${rv}&fieldSelector=status.phase%3DRunning`);
    const pod = await a.call('POST', path, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const setPhase = async (phase: string) => {
      const cur = await a.call('GET', `${path}/p`);
      return a.call('PUT', `${path}/p/status`, { ...cur, status: { ...cur.status, phase } });
    };
    assert.equal(pod.status.phase, 'Pending');
    await setPhase('Running');
    await setPhase('Succeeded');
    await w.waitFor((evs) => evs.length >= 2, '2 events');
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.object.status.phase}`),
      ['ADDED Running', 'DELETED Running'],
    );
  });

  it('timeoutSeconds ends the stream cleanly', async () => {
    const started = Date.now();
    const w = await watch(`${CM('default')}?watch=1&timeoutSeconds=1`);
    await w.waitClosed(30_000); // a hang guard: the terminating chunk below is the cause
    assert.equal(w.ended, true, 'terminating chunk received');
    assert.equal(w.broken, false);
    assert.ok(Date.now() - started >= 900, 'not before the timeout');
  });

  it('sends BOOKMARK events only with allowWatchBookmarks=true', async () => {
    await a.namespace('w-bm');
    const rv = await a.rv();
    const withBm = await watch(`${CM('w-bm')}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const without = await watch(`${CM('w-bm')}?watch=1&resourceVersion=${rv}`);
    const created = await a.create('w-bm', 'o');
    await withBm.waitFor((evs) => evs.filter((e) => e.type === 'BOOKMARK').length >= 2, '2 bookmarks', 5000);
    const bms = withBm.events.filter((e) => e.type === 'BOOKMARK');
    for (const b of bms) {
      assert.equal(b.object.kind, 'ConfigMap');
      assert.equal(b.object.apiVersion, 'v1');
      assert.deepEqual(Object.keys(b.object.metadata), ['resourceVersion']);
      assert.ok(Number(b.object.metadata.resourceVersion) >= Number(created.metadata.resourceVersion));
    }
    assert.deepEqual(names(without.events), ['ADDED o']);
    assert.equal(without.events.length, 1, 'no bookmark without the flag');
  });

  it('streaming list: ADDED for each object, the initial-events-end BOOKMARK, then live events', async () => {
    await a.namespace('w-sl');
    for (const n of ['s1', 's2', 's3']) await a.create('w-sl', n);
    const listed = await a.list('w-sl');
    const q = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
    for (const rvParam of ['&resourceVersion=', '', `&resourceVersion=${listed.metadata.resourceVersion}`]) {
      const existing = (await a.list('w-sl')).items.map((o: any) => `ADDED ${o.metadata.name}`);
      assert.ok(existing.length >= 3);
      const w = await watch(`${CM('w-sl')}?${q}${rvParam}`);
      await w.waitEvents(existing.length + 1);
      assert.deepEqual(
        w.events.slice(0, existing.length).map((e) => `${e.type} ${e.object.metadata.name}`),
        existing,
      );
      const end = w.events[existing.length]!;
      assert.equal(end.type, 'BOOKMARK');
      assert.equal(end.object.kind, 'ConfigMap');
      assert.deepEqual(end.object.metadata.annotations, { 'plat.io/initial-events-end': 'true' });
      assert.ok(Number(end.object.metadata.resourceVersion) >= Number(listed.metadata.resourceVersion));
      const live = `live${rvParam.length}`;
      await a.create('w-sl', live);
      await w.waitFor((evs) => names(evs).includes(`ADDED ${live}`), live);
      w.close();
    }
  });

  it('streaming list needs resourceVersionMatch=NotOlderThan (400 Status, not a stream); sendInitialEvents=false sends no state', async () => {
    for (const q of [
      'sendInitialEvents=true',
      'sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1',
      'sendInitialEvents=false',
    ]) {
      const r = await request(s.url, 'GET', `${CM('default')}?watch=1&${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, /resourceVersionMatch/);
    }
    await a.namespace('w-nostate');
    await a.create('w-nostate', 'before');
    const w = await watch(
      `${CM('w-nostate')}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    await a.create('w-nostate', 'after');
    await w.waitFor((evs) => names(evs).length >= 1, 'one event');
    assert.deepEqual(names(w.events), ['ADDED after']);
    assert.ok(!w.events.some((e) => e.object.metadata.annotations), 'no initial-events-end bookmark');
  });
});

describe('watch server timeout', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer(['--min-request-timeout', '1']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('ends a watch without timeoutSeconds after the jittered --min-request-timeout (1-2 s)', async () => {
    const started = Date.now();
    const w = await openWatch(s.url, `${CM('default')}?watch=1`);
    // a hang guard, not a bound: without the flag the server's watch timeout is 30-60 minutes,
    // so a clean end within it is the flag's doing
    await w.waitClosed(30_000);
    const took = Date.now() - started;
    assert.equal(w.ended, true, 'terminating chunk received');
    assert.equal(w.broken, false);
    assert.ok(took >= 900, `ended after ${took} ms, not before the minimum`);
  });
});

describe('slow watcher', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer(['--watch-buffer-bytes', '65536']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('is cut off at its buffer limit while other watchers and writes go on', async () => {
    const a = api(s.url);
    await a.namespace('slow');
    const rv = await a.rv();
    const path = `${CM('slow')}?watch=1&resourceVersion=${rv}`;
    // a client that sends the request and then never reads
    const raw = net.connect(s.port, '127.0.0.1');
    raw.pause();
    const rawClosed = new Promise<void>((resolve) => raw.on('close', () => resolve()));
    raw.on('error', () => undefined);
    raw.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const fast = await openWatch(s.url, path);
    // 80 updates of a 200 KB object: far more than the socket buffers and the 64 KiB limit
    const big = 'x'.repeat(200_000);
    await a.create('slow', 'big', {}, { k: big });
    // the slow client has not read a byte: that all 80 writes complete at all shows they do not
    // wait for it (no clock bound: on a loaded machine they take tens of seconds either way)
    await pool(
      Array.from({ length: 80 }, (_, i) => i),
      1,
      async (i) => {
        await a.update('slow', 'big', { k: big, i: String(i) });
      },
    );
    await fast.waitEvents(81, 60_000);
    assert.equal(fast.events.at(-1)!.object.data.i, '79');
    // now drain the slow client: the server must have dropped it before the end of the events
    let got = '';
    raw.setEncoding('latin1');
    raw.on('data', (d: string) => {
      got += d;
    });
    raw.resume();
    await Promise.race([
      rawClosed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('slow watcher was not closed')), 30_000)),
    ]);
    const seen = (got.match(/"type":"(ADDED|MODIFIED)"/g) ?? []).length;
    assert.ok(seen < 81, `slow watcher saw ${seen} of 81 events`);
    assert.ok(!got.endsWith('0\r\n\r\n'), 'cut off, not ended cleanly');
    fast.close();
  });
});
