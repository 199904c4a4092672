/**
 * The load client's `discardBody` (bench/load/client.ts): a body the caller does not use is read
 * to its last byte and counted (the recorded bytes are the body's length), its chunks dropped as
 * they arrive; without it the body comes back whole.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client } from '../../bench/load/client.js';
import { Recorder } from '../../bench/load/recorder.js';

const CHUNK = Buffer.alloc(64 * 1024, 0x61);
const CHUNKS = 40;
let server: http.Server;
let url: string;

before(async () => {
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const more = (): void => {
      while (sent < CHUNKS) {
        sent++;
        if (!res.write(CHUNK)) return void res.once('drain', more);
      }
      res.end('b');
    };
    more();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const op = { verb: 'LIST', resource: 'pods', phase: 'list', method: 'GET', path: '/api/v1/pods' };

test('discardBody: every byte read and counted, no body kept', async () => {
  const rec = new Recorder();
  const c = new Client(url, {}, 1, rec);
  const a = await c.call({ ...op, discardBody: true });
  assert.equal(a.status, 200);
  assert.equal(a.body.length, 0);
  const stats = [...rec.ops.values()][0]!;
  assert.equal(stats.requests, 1);
  assert.equal(stats.bytes, CHUNKS * CHUNK.length + 1);
});

test('by default the body comes back whole and is counted the same', async () => {
  const rec = new Recorder();
  const c = new Client(url, {}, 1, rec);
  const a = await c.call(op);
  assert.equal(a.body.length, CHUNKS * CHUNK.length + 1);
  assert.equal(a.body.at(-1), 0x62);
  assert.equal([...rec.ops.values()][0]!.bytes, a.body.length);
});
