/**
 * Large reply bodies' buffers are reused (src/codec/buffer-pool.ts): the actor writes a list body
 * in a buffer of its own, packBodies moves it to the front thread, the front returns it once
 * written (returnBody), the next batch hands it back and the next large body is written into it,
 * so listing does not allocate fresh external memory per list (and per-list garbage collections).
 */
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { joinItems } from '../../src/codec/codec.js';
import { dropSpares, ownedBuffer, REUSE_MIN_BYTES, reuse, spareBytesHeld } from '../../src/codec/buffer-pool.js';
import { packBodies, returnBody, takeReturned } from '../../src/actors/pack.js';
import type { BatchReply, Result } from '../../src/actors/protocol.js';

const item = Buffer.alloc(1024, 0x61);
const items = (n: number) => Array.from({ length: n }, () => item);

describe('reused list body buffers', () => {
  beforeEach(() => {
    dropSpares();
    takeReturned();
  });

  it('a large body goes to the front, back with the next batch, and the next body of its size is written into it', () => {
    const body = joinItems('[', items(200), ']');
    const reply: BatchReply = {
      results: [{ id: 1, code: 200, body, contentType: 'application/json' }],
      events: [],
    } as unknown as BatchReply;
    const moved = packBodies(reply);
    assert.ok(moved.length === 1 && moved[0] === body.buffer, 'its own buffer, transferred as is');
    const res = reply.results[0] as Result;
    returnBody(res);
    const back = takeReturned();
    assert.ok(back?.length === 1 && back[0] === body.buffer);
    assert.equal(takeReturned(), undefined, 'taken once');
    reuse(back!);
    assert.equal(spareBytesHeld(), body.buffer.byteLength);
    const next = joinItems('[', items(190), ']');
    assert.ok(next.buffer === body.buffer, 'written into the returned buffer');
    assert.equal(next.byteLength, 1 + 190 * 1024 + 189 + 1);
    assert.equal(Buffer.from(next.buffer, next.byteOffset, next.byteLength).toString('latin1', 0, 3), '[aa');
    assert.equal(spareBytesHeld(), 0);
  });

  it('small bodies, bodies that did not travel alone, and spares much larger than the body are not reused', () => {
    const small = joinItems('', [Buffer.from('x')], '');
    const r: Result = { id: 1, code: 200, body: small, contentType: 'application/json', ownBuffer: true };
    returnBody(r);
    returnBody({ id: 2, code: 200, body: new Uint8Array(REUSE_MIN_BYTES * 2), contentType: 'application/json' });
    assert.equal(takeReturned(), undefined);
    reuse([new ArrayBuffer(REUSE_MIN_BYTES * 8)]);
    const b = ownedBuffer(REUSE_MIN_BYTES);
    assert.equal(b.buffer.byteLength, REUSE_MIN_BYTES, 'at most twice the size is taken');
    assert.equal(ownedBuffer(REUSE_MIN_BYTES * 5).buffer.byteLength, REUSE_MIN_BYTES * 8);
  });

  it('keeps at most 64 MiB of spares, dropping the oldest', () => {
    const bufs = Array.from({ length: 10 }, () => new ArrayBuffer(10 * 1024 * 1024));
    reuse(bufs);
    assert.ok(spareBytesHeld() <= 64 * 1024 * 1024);
    const taken = bufs.indexOf(ownedBuffer(10 * 1024 * 1024).buffer as ArrayBuffer);
    assert.ok(taken >= 4, `one of the six newest kept, got #${taken}`);
  });
});
