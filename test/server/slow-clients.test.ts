/**
 * Issue 12 item 3: slow clients are cut off. A client that trickles its request head, or its
 * body, one byte a second is disconnected by the server's idle timeout (uWebSockets.js: 10 s),
 * however long it keeps trickling; the server keeps serving everyone else meanwhile. The
 * trickle is the behaviour under test; the test waits for the server to close the socket.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

/** Sends `first`, then one byte of `rest` a second; resolves with the ms until the server closed. */
function trickle(first: string, rest: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const sock = net.connect(s.port, '127.0.0.1', () => sock.write(first));
    let i = 0;
    const timer = setInterval(() => {
      if (i < rest.length && !sock.destroyed) sock.write(rest[i++]!);
    }, 1000);
    // bounded: a server that never cuts the client off fails the test after 30 s
    const limit = setTimeout(() => {
      clearInterval(timer);
      sock.destroy();
      reject(new Error('never cut off'));
    }, 30_000);
    sock.on('data', () => {});
    sock.on('error', () => {});
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(limit);
      resolve(Date.now() - started);
    });
  });
}

test('a trickled request head and a trickled body are both cut off within seconds; others are served meanwhile', async () => {
  const head = trickle('GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(60) + '\r\n\r\n');
  const body = trickle(
    'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{',
    ' '.repeat(60),
  );
  const served = await request(s.url, 'GET', '/api/v1/namespaces/default');
  assert.equal(served.status, 200, 'the server serves others while slow clients trickle');
  const [headMs, bodyMs] = await Promise.all([head, body]);
  assert.ok(headMs < 20_000, `trickled head cut off after ${headMs} ms`);
  assert.ok(bodyMs < 20_000, `trickled body cut off after ${bodyMs} ms`);
  assert.equal((await request(s.url, 'GET', '/readyz')).status, 200);
});
