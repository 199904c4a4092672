/**
 * The reply path of the front thread: a reply written in its request's handler goes straight
 * to the (already corked) socket, any other is corked; the seat is given back after the write;
 * the abort handler is attached only to a response left open past its handler.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from 'uWebSockets.js';
import { readBody, send, type Exchange } from '../../src/http/exchange.js';
import { leaveHandler } from '../../src/server/listener.js';

/** A uWS response that records the calls made on it. */
function fakeResponse(o: { endedAlready?: boolean } = {}) {
  const calls: string[] = [];
  let aborted: (() => void) | undefined;
  const res = {
    cork(fn: () => void) {
      calls.push('cork');
      fn();
      return res;
    },
    writeStatus(s: string | Uint8Array) {
      calls.push(`status ${Buffer.from(s).toString()}`);
      return res;
    },
    writeHeader(k: string | Uint8Array, v: string | Uint8Array) {
      calls.push(`header ${Buffer.from(k).toString()}: ${Buffer.from(v).toString()}`);
      return res;
    },
    end(b: string | Uint8Array) {
      calls.push(`end ${Buffer.from(b).toString()}`);
      return res;
    },
    onAborted(fn: () => void) {
      if (o.endedAlready) throw new Error('uWS.HttpResponse must not be accessed after a successful response');
      calls.push('onAborted');
      aborted = fn;
      return res;
    },
  };
  return { res: res as unknown as HttpResponse, calls, abort: () => aborted?.() };
}

const exchange = (res: HttpResponse, inHandler: boolean): Exchange => ({
  res,
  aborted: false,
  done: false,
  headers: [['X-Extra', 'yes']],
  inHandler,
});

test('a reply in its handler is written without a cork of its own; later ones are corked', () => {
  for (const inHandler of [true, false]) {
    const f = fakeResponse();
    const x = exchange(f.res, inHandler);
    x.release = () => f.calls.push('release');
    send(x, 200, 'application/json', '{}\n');
    assert.deepEqual(f.calls, [
      ...(inHandler ? [] : ['cork']),
      'status 200 OK',
      'header Content-Type: application/json',
      'header X-Extra: yes',
      'end {}\n',
      'release',
    ]);
    assert.equal(x.done, true);
  }
});

test('leaving the handler: an answered request gets no abort handler, an open one does', () => {
  const answered = fakeResponse();
  const x = exchange(answered.res, true);
  send(x, 404, 'application/json', '{}\n');
  leaveHandler(x);
  assert.equal(x.inHandler, false);
  assert.ok(!answered.calls.includes('onAborted'));

  const open = fakeResponse();
  const y = exchange(open.res, true);
  const seen: string[] = [];
  y.release = () => seen.push('release');
  y.onAbort = () => seen.push('onAbort');
  leaveHandler(y);
  assert.deepEqual(open.calls, ['onAborted']);
  open.abort();
  assert.equal(y.aborted, true);
  assert.deepEqual(seen, ['release', 'onAbort']);
  send(y, 200, 'application/json', '{}\n');
  assert.deepEqual(open.calls, ['onAborted'], 'nothing written to a response whose client left');

  // ended by a path that did not mark the exchange done: uWS refuses the handler, nothing throws
  const ended = fakeResponse({ endedAlready: true });
  leaveHandler(exchange(ended.res, true));
});

/** Delivers `parts` through readBody as uWS does: each in an ArrayBuffer that uWS reuses (zeroed here) once the callback returns. */
function readParts(parts: string[], limit = 1 << 20): { body?: Buffer; failed?: number } {
  const out: { body?: Buffer; failed?: number } = {};
  let onData!: (ab: ArrayBuffer, isLast: boolean) => void;
  const res = { onData: (fn: typeof onData) => (onData = fn) } as unknown as HttpResponse;
  readBody(
    { res, aborted: false, done: false, headers: [] },
    limit,
    0,
    (b) => (out.body = b),
    (st) => (out.failed = st.code),
  );
  parts.forEach((p, i) => {
    const ab = new ArrayBuffer(Buffer.byteLength(p));
    Buffer.from(ab).write(p);
    onData(ab, i === parts.length - 1);
    new Uint8Array(ab).fill(0);
  });
  return out;
}

test('a request body is copied out of uWS: intact after uWS reuses its buffer, in one piece or several', () => {
  const text = `{"metadata":{"name":"a"},"data":{"pad":"${'x'.repeat(1000)}"}}`;
  assert.equal(readParts([text]).body?.toString(), text);
  assert.equal(readParts([text.slice(0, 10), text.slice(10, 500), text.slice(500)]).body?.toString(), text);
  assert.equal(readParts(['x'.repeat(5000)]).body?.toString(), 'x'.repeat(5000));
  assert.equal(readParts(['x'.repeat(600), 'x'.repeat(600)], 1000).failed, 413);
});

test('a small request body takes no ArrayBuffer of its own (a slice of the shared pool: less work for the GC)', () => {
  const { body } = readParts(['{"kind":"ConfigMap","data":{"k":"v"}}']);
  assert.ok(body);
  assert.ok(
    body.buffer.byteLength > body.byteLength,
    `an ArrayBuffer of ${body.buffer.byteLength} bytes for ${body.byteLength}`,
  );
});
