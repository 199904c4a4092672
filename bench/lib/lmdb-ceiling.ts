/**
 * The storage ceiling for durable creates, measured in this process: raw LMDB batched puts of
 * ~1 KB values into a fresh environment opened like the server's backend (string encoding, no
 * compression), one batch transaction in flight at a time as a shard actor does.
 */
import { open } from 'lmdb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from './stats.js';

export interface LmdbCeilingOptions {
  durationSec: number;
  batch: number;
  valueBytes: number;
  /** also wait for each commit to be flushed to disk (`db.flushed`), not only committed */
  flushed: boolean;
  maxPuts: number;
}

export interface LmdbCeilingResult {
  putsPerSec: number;
  puts: number;
  batchP50Ms: number;
  batchP99Ms: number;
}

export async function lmdbBatchedPuts(o: LmdbCeilingOptions): Promise<LmdbCeilingResult> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-lmdb-'));
  const db = open<string, string>({ path: dir, encoding: 'string', compression: false });
  const value = 'x'.repeat(o.valueBytes);
  const latencies: number[] = [];
  let puts = 0;
  const start = performance.now();
  const deadline = start + o.durationSec * 1000;
  try {
    while (performance.now() < deadline && puts < o.maxPuts) {
      const t0 = performance.now();
      const first = puts;
      await db.transaction(() => {
        for (let i = 0; i < o.batch; i++) db.putSync(`/configmaps/bench/c-${first + i}`, value);
        db.putSync('\u0000meta/revision', String(first + o.batch));
      });
      if (o.flushed) await db.flushed;
      puts += o.batch;
      latencies.push(performance.now() - t0);
    }
    const elapsed = (performance.now() - start) / 1000;
    return {
      putsPerSec: puts / elapsed,
      puts,
      batchP50Ms: percentile(latencies, 50),
      batchP99Ms: percentile(latencies, 99),
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
