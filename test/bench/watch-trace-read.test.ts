/** The watch scenario's reading of the server's stage trace (bench/watch-trace-read.ts): flush shape and the front's GCs per phase. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatStages, readStages } from '../../bench/watch-trace-read.js';
import { gcFile } from '../../src/http/watch-trace.js';

test('a phase: its events, their flushes (wall, time in slices, slices) and the GCs that began in it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'watch-trace-read-'));
  const file = join(dir, 'trace.jsonl');
  try {
    // rv, sent, published, received, flush began, first, last, sends, backlogged, busy µs, slices
    const rows = [
      [1, 1_000, 2_000, 3_000, 4_000, 5_000, 14_000, 1000, 0, 6_000, 3],
      [2, 1_500, 2_000, 3_000, 4_000, 5_000, 14_000, 1000, 0, 6_000, 3],
      [3, 20_000, 21_000, 22_000, 24_000, 25_000, 44_000, 1000, 10, 10_000, 5],
      // another phase (sent later): not counted
      [4, 900_000, 901_000, 902_000, 903_000, 904_000, 905_000, 1000, 0, 1_000, 1],
    ];
    writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    // start µs, kind (1 scavenge, 4 mark-compact, 8 incremental marking), duration µs
    const gcs = [
      [500, 1, 999_000],
      [2_000, 1, 700],
      [30_000, 1, 1_300],
      [31_000, 4, 5_000],
      [32_000, 8, 200],
      [950_000, 1, 800],
    ];
    writeFileSync(gcFile(file), `${gcs.map((g) => JSON.stringify(g)).join('\n')}\n`);
    const f = readStages(file, 1_000, 100_000)!;
    assert.equal(f.events, 3);
    assert.equal(f.eventsPerFlush, 1.5);
    assert.equal(f.sendsPerFlush, 1000);
    assert.deepEqual(f.flushMs, [10, 20]);
    assert.deepEqual(f.busyMs, [6, 10]);
    assert.equal(f.slicesP50, 3);
    assert.deepEqual(f.gc, { scavenges: 2, scavengeMs: 2, major: 1, majorMs: 5, other: 1, otherMs: 0.2 });
    assert.match(formatStages(f), /in its slices 6\.0\/10\.0 ms, 3 slices p50/);
    assert.match(formatStages(f), /front GCs: 2 scavenges \(2\.0 ms\), 1 mark-compacts \(5\.0 ms\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a trace of an older server (no slice columns, no GC file) still reads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'watch-trace-read-'));
  const file = join(dir, 'trace.jsonl');
  try {
    writeFileSync(file, `${JSON.stringify([1, 1_000, 2_000, 3_000, 4_000, 5_000, 14_000, 1000, 0])}\n`);
    const f = readStages(file, 0, 100_000)!;
    assert.equal(f.events, 1);
    assert.deepEqual(f.busyMs, [0, 0]);
    assert.equal(f.gc.scavenges, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
