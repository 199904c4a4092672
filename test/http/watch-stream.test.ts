/**
 * WatchStream with a client that stops reading (issue 18 item 6): the initial events go out a
 * slice at a time from one shared buffer, what the watcher holds of its own stays bounded, the
 * hub closes it once its queued events pass --watch-buffer-bytes (during the initial events
 * too), and the shared payload is let go when the last watcher holding it ends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from 'uWebSockets.js';
import { WatchStream, WATCH_SLICE_BYTES } from '../../src/http/watch-stream.js';
import { WatchHub, type Watcher } from '../../src/http/watch-hub.js';
import type { Exchange } from '../../src/http/exchange.js';
import type { ChangeEvent, Encoding } from '../../src/actors/protocol.js';

const JSON_ENC: Encoding = { format: 'json', pretty: false };

/** A uWS response whose socket takes `accept` bytes and then pushes back. */
function fakeExchange(accept: number): {
  x: Exchange;
  state: { handed: number; closed: boolean; writable?: () => boolean; accept: number };
} {
  const state: { handed: number; closed: boolean; writable?: () => boolean; accept: number } = {
    handed: 0,
    closed: false,
    accept,
  };
  const res = {
    cork(fn: () => void) {
      fn();
      return res;
    },
    writeStatus() {
      return res;
    },
    writeHeader() {
      return res;
    },
    write(chunk: string | Uint8Array) {
      state.handed += typeof chunk === 'string' ? chunk.length : chunk.byteLength;
      return state.handed <= state.accept;
    },
    onWritable(fn: () => boolean) {
      state.writable = fn;
      return res;
    },
    end() {
      state.closed = true;
      return res;
    },
    close() {
      state.closed = true;
      return res;
    },
    endWithoutBody() {
      return res;
    },
  };
  return { x: { res: res as unknown as HttpResponse, aborted: false, done: false, headers: [] }, state };
}

function watcher(hub: WatchHub, sink: WatchStream): Watcher {
  const w: Watcher = {
    typeKey: '/configmaps',
    namespace: 'ns',
    matcher: undefined,
    fromRV: 10,
    startRV: 10,
    sink,
    bookmarks: false,
    kind: 'ConfigMap',
    apiVersion: 'v1',
    closed: false,
    enc: JSON_ENC,
    headersSent: true,
  };
  sink.onClose = () => hub.remove(w);
  return w;
}

const change = (rv: number, size: number): ChangeEvent => ({
  typeKey: '/configmaps',
  type: 'MODIFIED',
  rv,
  namespace: 'ns',
  name: 'big',
  apiVersion: 'v1',
  uid: 'u',
  fields: {},
  labels: {},
  json: JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'big', namespace: 'ns', resourceVersion: String(rv) },
    data: { k: 'x'.repeat(size) },
  }),
});

test('100 stalled watchers of one 2 MB state: one shared buffer, a slice each handed to the socket, closed past the limit, released', () => {
  const limit = 64 * 1024;
  const hub = new WatchHub(limit);
  const state = Buffer.alloc(2 * 1024 * 1024, 'a').toString();
  const fakes = Array.from({ length: 100 }, () => fakeExchange(100_000));
  for (const f of fakes) {
    const payload = hub.initial.share('/configmaps', 'state@10', [state]);
    const stream = new WatchStream(f.x, JSON_ENC).open(payload.bytes, 0, payload.release)!;
    hub.add(watcher(hub, stream));
  }
  assert.deepEqual(hub.initial.held(), { payloads: 1, bytes: state.length }, 'one copy for all');
  for (const f of fakes)
    assert.ok(f.state.handed <= 100_000 + WATCH_SLICE_BYTES, `handed ${f.state.handed} bytes to a stalled socket`);
  // a small change queues behind the initial events: still under the limit
  hub.dispatch([change(11, 1000)]);
  hub.flush(); // what the end of the event-loop turn does
  assert.equal(hub.count, 100);
  assert.equal(hub.slowClosed, 0);
  // a large one passes the limit: every stalled watcher is cut off, and the shared state goes
  hub.dispatch([change(12, limit)]);
  hub.flush();
  assert.equal(hub.count, 0);
  assert.equal(hub.slowClosed, 100);
  for (const f of fakes) assert.ok(f.state.closed);
  hub.initial.share('/configmaps', 'other@13', ['y']).release(); // pushes nothing out: few are kept
  assert.ok(hub.initial.held().payloads <= 2);
});

test('a watcher that reads gets the initial events whole, then the queued events in order', () => {
  const hub = new WatchHub(1 << 20);
  const f = fakeExchange(0);
  const chunks: string[] = [];
  const res = f.x.res as unknown as { write: (c: string | Uint8Array) => boolean };
  const write = res.write;
  res.write = (c) => {
    chunks.push(typeof c === 'string' ? c : Buffer.from(c).toString());
    return write(c);
  };
  const state = '{"type":"ADDED","object":{}}\n'.repeat(10_000);
  const payload = hub.initial.share('/configmaps', 'k', [state]);
  const stream = new WatchStream(f.x, JSON_ENC).open(payload.bytes, 0, payload.release)!;
  hub.add(watcher(hub, stream));
  hub.dispatch([change(11, 10)]);
  hub.flush();
  // the socket drains: uWS calls onWritable until everything went out
  f.state.accept = Infinity;
  for (let i = 0; i < 100 && f.state.writable; i++) f.state.writable();
  const text = chunks.join('');
  assert.ok(text.startsWith(state), 'the initial events first, whole');
  assert.match(text.slice(state.length), /^\s*\{"type":"MODIFIED"/);
  assert.equal(hub.initial.held().payloads, 1, 'kept for the next watcher of that state, unheld');
});

/** A stream over a fake socket that records what uWS was handed, write by write. */
function recorded(accept: number): { f: ReturnType<typeof fakeExchange>; writes: string[]; ended: () => boolean } {
  const f = fakeExchange(accept);
  const writes: string[] = [];
  let ended = false;
  const res = f.x.res as unknown as { write: (c: string | Uint8Array) => boolean; end: () => unknown };
  const write = res.write;
  res.write = (c) => {
    writes.push(typeof c === 'string' ? c : Buffer.from(c).toString());
    return write(c);
  };
  const end = res.end;
  res.end = () => {
    ended = true;
    return end();
  };
  return { f, writes, ended: () => ended };
}

const rvsOf = (text: string): string[] =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).object.metadata.resourceVersion);

test('events for a backlogged socket wait in the stream and go out in one write when it drains, in order', () => {
  const hub = new WatchHub(1 << 20);
  const { f, writes } = recorded(0);
  const stream = new WatchStream(f.x, JSON_ENC).open('', 0)!;
  hub.add(watcher(hub, stream));
  // the first flush meets the backlog (the socket took nothing): uWS holds it
  hub.dispatch([change(11, 10)]);
  hub.flush();
  const handed = writes.length;
  // later flushes of a backlogged socket do not reach uWS
  for (let rv = 12; rv <= 20; rv++) {
    hub.dispatch([change(rv, 10)]);
    hub.flush();
  }
  assert.equal(writes.length, handed, 'nothing handed to uWS while its backlog stands');
  f.state.accept = Infinity;
  f.state.writable!();
  const after = writes.slice(handed);
  assert.equal(after.length, 2, `one write of the queued events and the filler: ${JSON.stringify(after)}`);
  assert.deepEqual(rvsOf(after[0]!), ['12', '13', '14', '15', '16', '17', '18', '19', '20']);
  assert.equal(after[1], ' ');
  // drained: the next flush is written at once
  hub.dispatch([change(21, 10)]);
  hub.flush();
  assert.deepEqual(rvsOf(writes.slice(handed + 2).join('')), ['21']);
});

test('a stream closed with events queued behind a backlog writes them before it ends', () => {
  const hub = new WatchHub(1 << 20);
  const { f, writes, ended } = recorded(0);
  const stream = new WatchStream(f.x, JSON_ENC).open('', 0)!;
  hub.add(watcher(hub, stream));
  for (let rv = 11; rv <= 13; rv++) {
    hub.dispatch([change(rv, 10)]);
    hub.flush();
  }
  stream.close();
  assert.ok(ended(), 'ended cleanly (terminating chunk), not cut off');
  assert.deepEqual(rvsOf(writes.join('')), ['11', '12', '13']);
});
