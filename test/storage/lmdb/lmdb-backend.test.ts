/**
 * What the LMDB backend keeps resident besides its data: the environment's map (one mapping of
 * the data file however far the store grows).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../../src/storage/lmdb/lmdb-backend.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plat-lmdb-backend-'));
  dirs.push(dir);
  return dir;
}

/** The process's mappings of the file (from /proc/self/smaps), with their resident bytes. */
function mappingsOf(file: string): { rss: number }[] {
  const out: { rss: number }[] = [];
  let cur: { rss: number } | undefined;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      cur = line.endsWith(` ${file}`) ? { rss: 0 } : undefined;
      if (cur) out.push(cur);
    } else if (cur && line.startsWith('Rss:')) cur.rss = Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
  }
  return out;
}

/** A Pod-sized JSON value (about 2 KB, like the density scenario's Pods). */
function podJson(i: number): string {
  return JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: { name: `p-${i}`, namespace: `ns-${i % 7}` }, pad: 'x'.repeat(2000) });
}

async function fill(b: LmdbBackend, n: number, batch = 50): Promise<void> {
  for (let i = 0; i < n; i += batch) {
    const writes = [];
    for (let j = i; j < Math.min(n, i + batch); j++) writes.push({ key: `/pods/ns-${j % 7}/p-${j}`, value: podJson(j) });
    await b.commit(writes, i + batch);
  }
}

describe('LmdbBackend map', () => {
  it('maps the data file once while the store grows from empty to megabytes', async () => {
    const dir = freshDir();
    const b = new LmdbBackend(dir);
    await b.open();
    try {
      await fill(b, 2000); // ≈ 8 MB of pages: lmdb-js' default 128 KiB map would be regrown six times
      const maps = mappingsOf(join(dir, 'data.mdb'));
      assert.equal(maps.length, 1, `data.mdb is mapped ${maps.length} times`);
    } finally {
      await b.close();
    }
  });
});
