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

const CMS = '/api/v1/namespaces/default/configmaps';
let s: TestServer;
before(async () => { s = await startServer(); });
after(() => s.stop());

/** A strict HTTP/1.1 chunked-response reader over a raw socket. */
class StrictChunkReader {
  head: string | undefined;
  readonly chunks: string[] = [];
  ended = false;
  private buf = Buffer.alloc(0);
  readonly socket: net.Socket;

  constructor(port: number, path: string) {
    this.socket = net.connect(port, '127.0.0.1', () => this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    this.socket.on('data', (d: Buffer) => { this.buf = Buffer.concat([this.buf, d]); this.parse(); });
    this.socket.on('error', () => undefined);
  }

  private parse(): void {
    if (this.head === undefined) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.head = this.buf.subarray(0, end).toString('latin1');
      this.buf = this.buf.subarray(end + 4);
    }
    for (;;) {
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) return;
      const size = parseInt(this.buf.subarray(0, eol).toString('latin1'), 16);
      assert.ok(/^[0-9a-f]+$/i.test(this.buf.subarray(0, eol).toString('latin1')), `bad chunk size line ${JSON.stringify(this.buf.subarray(0, eol + 2).toString('latin1'))}`);
      // the data and its CRLF must both be there before the chunk counts as received
      if (this.buf.length < eol + 2 + size + 2) return;
      assert.equal(this.buf.subarray(eol + 2 + size, eol + 4 + size).toString('latin1'), '\r\n', 'chunk data not followed by CRLF');
      const data = this.buf.subarray(eol + 2, eol + 2 + size).toString('utf8');
      this.buf = this.buf.subarray(eol + 4 + size);
      if (size === 0) { this.ended = true; return; }
      this.chunks.push(data);
    }
  }

  /** the watch events received so far (complete chunks only) */
  events(): any[] {
    return this.chunks.join('').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  }
}

test('each event is a complete chunk on the wire before the next write', async () => {
  const rv = (await request(s.url, 'GET', CMS)).json.metadata.resourceVersion;
  const reader = new StrictChunkReader(s.port, `${CMS}?watch=1&resourceVersion=${rv}`);
  try {
    await until(async () => reader.head, 'the response headers', 5_000);
    assert.match(reader.head!, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(reader.head!, /\r\ntransfer-encoding: chunked/i);
    for (const name of ['one', 'two', 'three']) {
      const r = await request(s.url, 'POST', CMS, configMap(name));
      assert.equal(r.status, 201);
      // the next write happens only once this event has arrived complete
      await until(async () => (reader.events().some((e) => e.object.metadata.name === name) ? true : undefined), `the ADDED event of ${name} before the next write`, 5_000);
    }
    const del = await request(s.url, 'DELETE', `${CMS}/two`);
    assert.equal(del.status, 200);
    await until(async () => (reader.events().some((e) => e.type === 'DELETED') ? true : undefined), 'the DELETED event in a quiet period', 5_000);
    assert.deepEqual(reader.events().map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED one', 'ADDED two', 'ADDED three', 'DELETED two']);
    // every chunk carrying an event holds whole lines: nothing of an event waits for a later chunk
    for (const c of reader.chunks) if (c.trim()) assert.ok(c.endsWith('\n'), JSON.stringify(c.slice(-20)));
  } finally {
    reader.socket.destroy();
  }
});

test('a watch that times out ends with the terminating chunk after complete chunks', async () => {
  const rv = (await request(s.url, 'GET', CMS)).json.metadata.resourceVersion;
  const reader = new StrictChunkReader(s.port, `${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
  try {
    await until(async () => (reader.ended ? true : undefined), 'the end of the watch', 5_000);
    assert.equal(reader.events().length, 0);
  } finally {
    reader.socket.destroy();
  }
});
