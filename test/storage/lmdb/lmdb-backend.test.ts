/**
 * src/storage/lmdb/lmdb-backend.ts's commit path: a commit's writes and its revision land in one
 * transaction, are readable once the commit resolves (after the fsync), and the B-tree writes
 * run on lmdb-js's write thread, not on the calling thread (the shard actor's, which serialises
 * every batch of its shard).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../../src/storage/lmdb/lmdb-backend.js';
import type { Write } from '../../../src/storage/interface.js';

function withBackend(run: (b: LmdbBackend) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lmdb-backend-'));
    const b = new LmdbBackend(join(dir, 'shard'));
    try {
      await run(b);
    } finally {
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const value = 'v'.repeat(1400);
const writes = (from: number, n: number, prefix = '/configmaps/ns/c-'): Write[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}${from + i}`, value }));

async function stored(b: LmdbBackend, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const page of b.range(prefix)) for (const e of page) out.set(e.key, e.value);
  return out;
}

test(
  'a commit stores its writes, deletes and revision together; written() comes before it resolves',
  withBackend(async (b) => {
    await b.commit(writes(0, 3), 7);
    let wrote = false;
    const done = b.commit([{ key: '/configmaps/ns/c-1', value: undefined }, ...writes(3, 1)], 9, () => {
      wrote = true;
    });
    await done;
    assert.equal(wrote, true);
    assert.equal(b.revision(), 9);
    assert.deepEqual([...(await stored(b, '/configmaps/ns/')).keys()].sort(), [
      '/configmaps/ns/c-0',
      '/configmaps/ns/c-2',
      '/configmaps/ns/c-3',
    ]);
  }),
);

test(
  "a commit's B-tree writes run off the calling thread: one queued batch, no transaction callback here",
  withBackend(async (b) => {
    // lmdb-js runs a `transaction` callback (and `putSync`) on the calling thread inside the
    // write thread's transaction; `batch` queues the block for the write thread (the shard
    // actor's CPU per create, "Creates, fifth round" in docs/benchmarks.md)
    const db = (b as unknown as { db: Record<string, (...a: unknown[]) => unknown> }).db;
    const calls: string[] = [];
    for (const name of ['transaction', 'transactionSync', 'putSync', 'removeSync', 'batch']) {
      const original = db[name]!.bind(db);
      db[name] = (...a: unknown[]) => {
        calls.push(name);
        return original(...a);
      };
    }
    const n = 500;
    await b.commit([...writes(0, n), { key: '/configmaps/ns/c-0', value: undefined }], 2);
    assert.deepEqual(calls, ['batch']);
    assert.equal((await stored(b, '/configmaps/ns/')).size, n - 1);
    assert.equal(b.revision(), 2);
  }),
);
