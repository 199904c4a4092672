/**
 * The TLS front's relay of agent bytes (src/auth/relay.ts): the reads of one I/O turn leave in
 * one vectored write (one SSL_write and one writev on a TLS socket), framed per read when asked,
 * and the source pauses only when RELAY_WINDOW bytes wait, not at every 16 KiB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex, PassThrough } from 'node:stream';
import { RELAY_BATCH, RELAY_WINDOW, relay } from '../../src/auth/relay.js';

/** A sink recording each write call's pieces; callbacks held until `flush`. */
class Sink extends Duplex {
  calls: number[][] = [];
  private held: (() => void)[] = [];
  /** auto: each write completes at once (a socket the kernel takes everything from) */
  constructor(private readonly auto = false) {
    super({ read() {} });
  }
  override _write(chunk: Buffer, _e: BufferEncoding, cb: () => void): void {
    this.calls.push([chunk.length]);
    this.hold(cb);
  }
  override _writev(chunks: { chunk: Buffer }[], cb: () => void): void {
    this.calls.push(chunks.map((c) => c.chunk.length));
    this.hold(cb);
  }
  private hold(cb: () => void): void {
    if (this.auto) cb();
    else this.held.push(cb);
  }
  flush(): void {
    const h = this.held;
    this.held = [];
    for (const cb of h) cb();
  }
}

const turn = () => new Promise((r) => setImmediate(r));

test('the reads of one turn leave together, one message head per read when framed', async () => {
  const source = new PassThrough(),
    sink = new Sink(true);
  relay(source, sink, (n) => Buffer.from(`<${n}>`));
  for (let i = 0; i < 4; i++) source.emit('data', Buffer.alloc(16_384, i));
  assert.deepEqual(sink.calls, [], 'nothing is written before the turn ends');
  await turn();
  assert.deepEqual(sink.calls, [[7, 16_384, 7, 16_384, 7, 16_384, 7, 16_384]]);
});

test('a long turn is written in batches of RELAY_BATCH, not one write per read', async () => {
  const source = new PassThrough(),
    sink = new Sink(true);
  relay(source, sink);
  const chunk = 64 * 1024;
  for (let n = 0; n < RELAY_WINDOW; n += chunk) source.emit('data', Buffer.alloc(chunk));
  await turn();
  assert.deepEqual(
    sink.calls,
    Array.from({ length: RELAY_WINDOW / RELAY_BATCH }, () => Array(RELAY_BATCH / chunk).fill(chunk)),
  );
  assert.equal(source.isPaused(), false);
});

test('the source pauses when RELAY_WINDOW bytes wait in the sink and resumes once they drained', async () => {
  const source = new PassThrough(),
    sink = new Sink();
  relay(source, sink);
  for (let n = 0; n < RELAY_WINDOW; n += 64 * 1024) source.emit('data', Buffer.alloc(64 * 1024));
  assert.equal(source.isPaused(), true, 'a full window pauses the source');
  for (let i = 0; i < 5 && source.isPaused(); i++) {
    sink.flush();
    await turn();
  }
  assert.equal(source.isPaused(), false, 'drained: the source reads again');
});

test('a few bytes pause nothing (pipe would pause a TLS source at every 16 KiB write)', async () => {
  const source = new PassThrough(),
    sink = new Sink();
  relay(source, sink);
  source.emit('data', Buffer.alloc(200_000));
  source.emit('data', Buffer.alloc(16_384));
  await turn();
  assert.equal(source.isPaused(), false, 'the sink has not completed a write, yet the source reads on');
  assert.deepEqual(sink.calls, [[200_000, 16_384]]);
});
