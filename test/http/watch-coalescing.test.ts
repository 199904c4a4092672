/**
 * Coalesced watch delivery end to end (issue 24 item 6): while many writes commit at once, the
 * hub puts several events into one socket write per watcher. On the raw wire, every chunk of a
 * JSON stream holds whole event lines and every chunk of a Protobuf stream whole frames, some
 * chunk holds several events, and the events arrive complete, each once, in resourceVersion
 * order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';

const PB = 'application/vnd.platform.protobuf';
const NS = 'default';
const WRITES = 150;
const CONCURRENCY = 30;
const codec = new ProtobufCodec();

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

/** A watch read off a raw socket: the data of each HTTP chunk as it arrived. */
interface RawWatch {
  chunks: Buffer[];
  close(): void;
}

function rawWatch(path: string, accept: string): Promise<RawWatch> {
  const sock = net.connect(s.port, '127.0.0.1');
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${accept}\r\n\r\n`);
  let buf = Buffer.alloc(0);
  let body = -1;
  const w: RawWatch = { chunks: [], close: () => sock.destroy() };
  sock.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    if (body < 0) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      assert.match(buf.subarray(0, end).toString('latin1'), /^HTTP\/1\.1 200 /);
      buf = buf.subarray(end + 4);
      body = 0;
    }
    // uWS frames each chunk as [\r\n]<hex>\r\n<data>: a chunk is whole once its data is here
    for (;;) {
      const at = buf.subarray(0, 2).toString('latin1') === '\r\n' ? 2 : 0;
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return;
      const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
      if (buf.length < eol + 2 + size) return;
      if (size > 0) w.chunks.push(buf.subarray(eol + 2, eol + 2 + size));
      buf = buf.subarray(eol + 2 + size);
    }
  });
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.once('connect', () => resolve(w));
  });
}

/** The names and versions of the events in one JSON chunk; asserts it holds whole lines. */
function jsonEvents(chunk: Buffer): { name: string; rv: number }[] {
  const text = chunk.toString('utf8');
  if (!text.trim()) return [];
  assert.ok(text.endsWith('\n'), `a chunk ends inside an event: ${JSON.stringify(text.slice(-40))}`);
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion: string } } })
    .map((e) => ({ name: e.object.metadata.name, rv: Number(e.object.metadata.resourceVersion) }));
}

/** The same for one Protobuf chunk: whole length-prefixed frames only. */
function protobufEvents(chunk: Buffer): { name: string; rv: number }[] {
  const out: { name: string; rv: number }[] = [];
  let at = 0;
  while (at < chunk.length) {
    assert.ok(chunk.length - at >= 4, 'a chunk ends inside a frame length');
    const len = chunk.readUInt32BE(at);
    assert.ok(at + 4 + len <= chunk.length, 'a chunk ends inside a frame');
    const ev = codec.decodeWatchEvent(chunk.subarray(at, at + 4 + len));
    const meta = (ev.object as { metadata: { name: string; resourceVersion: string } }).metadata;
    out.push({ name: meta.name, rv: Number(meta.resourceVersion) });
    at += 4 + len;
  }
  return out;
}

test('events committed together reach JSON and Protobuf watchers coalesced, complete and in order', async () => {
  const list = await request(s.url, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(list.status, 200);
  const path = `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`;
  const watches = [
    { w: await rawWatch(path, 'application/json'), parse: jsonEvents },
    { w: await rawWatch(path, PB), parse: protobufEvents },
  ];
  try {
    // writes may start before the watches are registered: they start at the list's version
    const names = Array.from({ length: WRITES }, (_, i) => `co-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < WRITES; i += CONCURRENCY) {
      const replies = await Promise.all(
        names.slice(i, i + CONCURRENCY).map((name) =>
          request(s.url, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name },
            data: { k: 'v'.repeat(200) },
          }),
        ),
      );
      for (const r of replies) assert.equal(r.status, 201, r.text);
    }
    for (const { w, parse } of watches) {
      const seen = (): { name: string; rv: number }[] => w.chunks.flatMap((c) => parse(c));
      await until(async () => (seen().length >= WRITES ? true : undefined), `${WRITES} events`);
      const events = seen();
      assert.equal(events.length, WRITES, 'each event once');
      assert.deepEqual([...events.map((e) => e.name)].sort(), names);
      for (let i = 1; i < events.length; i++)
        assert.ok(events[i]!.rv > events[i - 1]!.rv, `rv order at ${i}: ${events[i - 1]!.rv} then ${events[i]!.rv}`);
      const most = Math.max(...w.chunks.map((c) => parse(c).length));
      assert.ok(most >= 2, `no chunk carried more than one event (${w.chunks.length} chunks)`);
    }
  } finally {
    for (const { w } of watches) w.close();
  }
});
