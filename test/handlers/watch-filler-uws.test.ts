/**
 * Why a JSON watch opens with (and every flush ends with) the one-byte whitespace chunk of
 * src/handlers/watch.ts (issue 19 item 7): the pinned uWebSockets.js build can neither send a
 * response's header block without a body byte nor end a chunk with its CRLF. Upstream
 * (net/http) flushes the bare headers of a watch and writes each event as `<hex>\r\n<data>\r\n`.
 * This pins the two limitations on a bare uWS app over a raw socket: when it fails, the uWS
 * build can do what upstream does, and the filler should go (see docs/compatibility.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import uWS, { type HttpResponse } from 'uWebSockets.js';
import { until } from '../helpers/poll.js';

test('uWS sends no header block alone and leaves a chunk unterminated', async () => {
  let res: HttpResponse | undefined;
  const app = uWS.App().get('/*', (r) => {
    r.onAborted(() => {
      res = undefined;
    });
    // everything uWS offers for "headers now, body later": status, headers, an empty write
    r.cork(() => {
      r.writeStatus('200 OK').writeHeader('Content-Type', 'application/json');
      r.write('');
    });
    res = r;
  });
  const listen = await new Promise<uWS.us_listen_socket>((ok, fail) =>
    app.listen('127.0.0.1', 0, (ls) => (ls ? ok(ls) : fail(new Error('listen failed')))),
  );
  const sock = net.connect(uWS.us_socket_local_port(listen), '127.0.0.1', () =>
    sock.write('GET /w HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
  );
  let wire = '';
  sock.on('data', (d: Buffer) => {
    wire += d.toString('latin1');
  });
  try {
    // the first cork left as one write: what arrived of it is all there is
    await until(
      async () => (wire.includes('Content-Type: application/json\r\n') ? true : undefined),
      'the response head',
    );
    assert.ok(!wire.includes('\r\n\r\n'), `header block ended without a body byte: ${JSON.stringify(wire)}`);
    // the first data byte ends the header block, but its own chunk stays open
    res!.cork(() => res!.write('x'));
    await until(async () => (wire.endsWith('x') ? true : undefined), 'the first chunk');
    assert.match(
      wire,
      /Transfer-Encoding: chunked\r\n\r\n1\r\nx$/,
      'chunk written with its CRLF (or framed otherwise)',
    );
    res!.cork(() => res!.end());
    await until(async () => (wire.endsWith('\r\n0\r\n\r\n') ? true : undefined), 'the last chunk');
    assert.match(wire, /1\r\nx\r\n0\r\n\r\n$/);
  } finally {
    sock.destroy();
    uWS.us_listen_socket_close(listen);
  }
});
