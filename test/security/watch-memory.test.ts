/**
 * Issue 18 item 6, adversarial: watches that never read. 100 watches with resourceVersion=0 of
 * a namespace holding ~1.5 MB of ConfigMaps, from clients that send the request and never read
 * a byte: the server's memory must stay bounded (the initial events are one shared copy, each
 * watcher's own backlog is bounded), other requests are served, and memory is back near where
 * it started once the clients are gone (before the fix: ~500 MB more for these 100 watchers).
 * Closing a watcher whose unread events pass --watch-buffer-bytes during its initial events is
 * test/handlers/watch-stream.test.ts (the kernel's socket buffers take ~4 MB per loopback
 * connection here, more than this state, so only a unit test stalls a socket reliably).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, stopServers, request, configMap, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const NS = 'mem';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const WATCHERS = 100;
/** the naive cost: one private copy of the initial events per watcher */
const STATE_BYTES = 150 * 10_000;

let s: TestServer;
before(async () => {
  s = await startServer(['--watch-buffer-bytes', String(64 * 1024)]);
});
after(() => stopServers([s]));

async function metric(name: string): Promise<number> {
  const text = (await request(s.url, 'GET', '/metrics')).text;
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name + ' ') || line.startsWith(name + '{'))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** A client that sends a watch request and then never reads. */
function silentWatch(path: string): { socket: net.Socket; closed: Promise<void> } {
  const socket = net.connect(s.port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  return { socket, closed };
}

async function timedGet(path: string): Promise<number> {
  const t = Date.now();
  const r = await request(s.url, 'GET', path);
  assert.equal(r.status, 200, r.text.slice(0, 200));
  return Date.now() - t;
}

test('100 non-reading watchers of 1.5 MB: bounded memory, others served, memory back after close', async () => {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  const value = 'x'.repeat(10_000);
  for (let i = 0; i < 150; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, async (_, j) => {
        const r = await request(s.url, 'POST', CMS, configMap(`cm-${i + j}`, {}, { k: value }));
        assert.equal(r.status, 201, r.text.slice(0, 200));
      }),
    );
  }
  const watching = await metric('apiserver_longrunning_requests');
  const rss0 = await metric('process_resident_memory_bytes');
  const clients = Array.from({ length: WATCHERS }, () => silentWatch(`${CMS}?watch=1&resourceVersion=0`));
  await until(
    async () => ((await metric('apiserver_longrunning_requests')) >= watching + WATCHERS ? true : undefined),
    'the watches to start',
    30_000,
  );
  // other clients are served while the watches hold their state
  assert.ok((await timedGet('/readyz')) < 2000);
  assert.ok((await timedGet(`${CMS}?limit=5`)) < 2000);
  const rss1 = await metric('process_resident_memory_bytes');
  // private copies would be 100 x 1.5 MB (several times that with the copies on the way)
  assert.ok(
    rss1 - rss0 < (STATE_BYTES * WATCHERS) / 3,
    `resident memory grew by ${Math.round((rss1 - rss0) / 1e6)} MB for ${WATCHERS} watchers`,
  );

  // the clients go away without reading: every watch ends and nothing stays behind
  for (const c of clients) c.socket.destroy();
  await Promise.all(clients.map((c) => c.closed));
  await until(
    async () => ((await metric('apiserver_longrunning_requests')) <= watching ? true : undefined),
    'the watches to end',
    20_000,
  );
  assert.ok((await timedGet('/readyz')) < 2000);
  const rss2 = await metric('process_resident_memory_bytes');
  assert.ok(
    rss2 - rss0 < (STATE_BYTES * WATCHERS) / 3,
    `resident memory after close is ${Math.round((rss2 - rss0) / 1e6)} MB above the start`,
  );
});
