/**
 * How many sends a flush of one watcher costs, on a response that corks as the pinned uWS build
 * does (uWebSockets AsyncSocket::write / HttpResponse::write and cork): a corked write is
 * copied into the loop's 16 KB cork buffer when it fits; one that does not fit sends the
 * buffer and the bytes at once (two sends) and leaves the socket uncorked; an uncorked write
 * is a send of its own; a chunked write is four writes (`\r\n`, the hex length, `\r\n`, the
 * data); cork() on an uncorked socket corks it, runs its callback and sends what it copied
 * (nothing more when it is already corked). The real build's counts for the same writes
 * (strace -c over 20,000 writes of 8 KB and 20 KB events plus the filler): 1 and 6 sends per
 * write before this change, 1 and 3 after.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from 'uWebSockets.js';
import { WatchStream } from '../../src/http/watch-stream.js';
import type { Encoding } from '../../src/actors/protocol.js';

const CORK_BUFFER = 16 * 1024;

function corkingExchange(): { x: { res: HttpResponse; aborted: boolean; done: boolean; headers: [] }; sent: string[] } {
  const sent: string[] = [];
  let corked = false;
  let buffer = '';
  const send = (bytes: string): void => {
    if (bytes.length) sent.push(bytes);
  };
  const piece = (bytes: string): void => {
    if (!corked) return send(bytes);
    if (buffer.length + bytes.length <= CORK_BUFFER) {
      buffer += bytes;
      return;
    }
    send(buffer);
    send(bytes);
    buffer = '';
    corked = false;
  };
  const res = {
    cork(fn: () => void) {
      if (corked) {
        fn();
        return res;
      }
      corked = true;
      fn();
      if (corked) send(buffer);
      buffer = '';
      corked = false;
      return res;
    },
    writeStatus: () => res,
    writeHeader: () => res,
    write(chunk: string | Uint8Array) {
      const data = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
      for (const p of ['\r\n', data.length.toString(16), '\r\n', data]) piece(p);
      return true;
    },
    onWritable: () => res,
    end: () => res,
    close: () => res,
    endWithoutBody: () => res,
  };
  return { x: { res: res as unknown as HttpResponse, aborted: false, done: false, headers: [] }, sent };
}

const JSON_ENC: Encoding = { format: 'json', pretty: false };
const PB_ENC: Encoding = { format: 'protobuf', pretty: false };
const events = (bytes: number): Buffer => Buffer.from(`${'{"type":"MODIFIED","object":{}}'.padEnd(bytes - 1, ' ')}\n`);

function flushOf(enc: Encoding, bytes: number): string[] {
  const { x, sent } = corkingExchange();
  const stream = new WatchStream(x as never, enc).open('', 0);
  assert.ok(stream);
  sent.length = 0;
  stream.write(events(bytes));
  return sent;
}

test('a JSON flush that fits the cork buffer is one send, the filler with it', () => {
  const sent = flushOf(JSON_ENC, 8_000);
  assert.equal(sent.length, 1);
  assert.ok(sent[0]!.endsWith('\r\n1\r\n '));
});

test('a JSON flush larger than the cork buffer is three sends: the framing, the events, the filler in a cork of its own', () => {
  for (const bytes of [20_000, 200_000]) {
    const sent = flushOf(JSON_ENC, bytes);
    assert.deepEqual(
      sent.map((s) => s.length),
      [`\r\n${bytes.toString(16)}\r\n`.length, bytes, '\r\n1\r\n '.length],
      `${bytes} bytes`,
    );
    assert.equal(sent[2], '\r\n1\r\n ');
  }
});

test('a binary flush has no filler: two sends when it does not fit, one when it does', () => {
  assert.equal(flushOf(PB_ENC, 20_000).length, 2);
  assert.equal(flushOf(PB_ENC, 2_000).length, 1);
});
