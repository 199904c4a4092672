/**
 * Watch chunk framing (issue 19 item 7): a client that hands a chunk's data on only after the
 * chunk's closing CRLF (as urllib3 does, so the Python client) must get each event before the
 * next write, and the last one before a quiet period at all. The raw-socket client here
 * parses `<hex>\r\n<data>\r\n` strictly and releases data only when the terminator is there.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { StrictChunkReader } from '../helpers/chunk-reader.js';

const CMS = '/api/v1/namespaces/default/configmaps';
let s: TestServer;
before(async () => {
  s = await startServer();
});
after(() => s.stop());

test('each event is a complete chunk on the wire before the next write', async () => {
  const rv = (await request(s.url, 'GET', CMS)).json.metadata.resourceVersion;
  const reader = new StrictChunkReader(net.connect(s.port, '127.0.0.1'), `${CMS}?watch=1&resourceVersion=${rv}`);
  try {
    await until(async () => reader.head, 'the response headers', 5_000);
    assert.match(reader.head!, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(reader.head!, /\r\ntransfer-encoding: chunked/i);
    for (const name of ['one', 'two', 'three']) {
      const r = await request(s.url, 'POST', CMS, configMap(name));
      assert.equal(r.status, 201);
      // the next write happens only once this event has arrived complete
      await until(
        async () => (reader.events().some((e) => e.object.metadata.name === name) ? true : undefined),
        `the ADDED event of ${name} before the next write`,
        5_000,
      );
    }
    const del = await request(s.url, 'DELETE', `${CMS}/two`);
    assert.equal(del.status, 200);
    await until(
      async () => (reader.events().some((e) => e.type === 'DELETED') ? true : undefined),
      'the DELETED event in a quiet period',
      5_000,
    );
    assert.deepEqual(
      reader.events().map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED one', 'ADDED two', 'ADDED three', 'DELETED two'],
    );
    // every chunk carrying an event holds whole lines: nothing of an event waits for a later chunk
    for (const c of reader.chunks) if (c.trim()) assert.ok(c.endsWith('\n'), JSON.stringify(c.slice(-20)));
  } finally {
    reader.socket.destroy();
  }
});

test('a watch that times out ends with the terminating chunk after complete chunks', async () => {
  const rv = (await request(s.url, 'GET', CMS)).json.metadata.resourceVersion;
  const reader = new StrictChunkReader(
    net.connect(s.port, '127.0.0.1'),
    `${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`,
  );
  try {
    await until(async () => (reader.ended ? true : undefined), 'the end of the watch', 5_000);
    assert.equal(reader.events().length, 0);
  } finally {
    reader.socket.destroy();
  }
});
