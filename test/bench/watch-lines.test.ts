/** The watch clients' line counting (bench/watch-lines.ts) sees every event once, however the reads split the stream. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineCounter } from '../../bench/watch-lines.js';
import { mulberry32 } from '../../bench/lib/mulberry32.js';

const event = (ts: number): string =>
  `{"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"annotations":{"bench-ts":"${ts}"}},"data":{"pad":"${'x'.repeat(ts % 300)}"}}}\n`;

/** A server-like JSON watch stream: per flush one chunk of events, then the one-byte filler chunk. */
function stream(flushes: number[][]): Buffer {
  let s = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
  let first = true;
  for (const tss of flushes) {
    const data = tss.map(event).join('');
    s += `${first ? '' : '\r\n'}${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n1\r\n `;
    first = false;
  }
  return Buffer.from(s);
}

function read(bytes: Buffer, cuts: number[]): { counted: number; seen: number[] } {
  const seen: number[] = [];
  const lines = new LineCounter((ts) => seen.push(ts));
  let counted = 0;
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    counted += lines.consume(bytes.subarray(at, cut), 0);
    at = cut;
  }
  return { counted, seen };
}

test('every event is counted once with its timestamp, whatever the read boundaries', () => {
  const flushes = [[101], [102, 103, 104], [105], [106, 107]];
  const bytes = stream(flushes);
  const want = flushes.flat();
  // every single cut, then random sets of cuts (reads of one byte included)
  for (let cut = 0; cut <= bytes.length; cut++)
    assert.deepEqual(read(bytes, [cut]), { counted: 7, seen: want }, `cut ${cut}`);
  const rand = mulberry32(7);
  for (let round = 0; round < 200; round++) {
    const cuts = [
      ...new Set(Array.from({ length: 1 + Math.floor(rand() * 40) }, () => Math.floor(rand() * bytes.length))),
    ].sort((a, b) => a - b);
    assert.deepEqual(read(bytes, cuts), { counted: 7, seen: want }, `cuts ${cuts.join(',')}`);
  }
});

test('a read that ends inside the filler leaves a carry that only joins the next line', () => {
  const bytes = stream([[201], [202, 203]]);
  const seen: number[] = [];
  const lines = new LineCounter((ts) => seen.push(ts));
  const end1 = bytes.indexOf(' ', bytes.indexOf('\r\n1\r\n')) + 1;
  assert.equal(lines.consume(bytes.subarray(0, end1), 0), 1);
  assert.equal(lines.consume(bytes.subarray(end1), 0), 2);
  assert.deepEqual(seen, [201, 202, 203]);
});
