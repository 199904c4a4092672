/**
 * Which values the LMDB backend stores compressed (src/storage/lmdb/store-options.ts): only
 * those of COMPRESSION_THRESHOLD bytes or more, the ones that could otherwise leave their leaf
 * for an overflow page; a shorter value (a 1.4 KB ConfigMap) is stored as it is, sparing the
 * create lmdb-js' per-value compression work item. Values compressed by earlier builds (from
 * 512 bytes) read back unchanged.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { LmdbBackend } from '../../../src/storage/lmdb/lmdb-backend.js';
import { COMPRESSION_THRESHOLD, storeOptions } from '../../../src/storage/lmdb/store-options.js';
import type { StoredEntry } from '../../../src/storage/interface.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plat-lmdb-threshold-'));
  dirs.push(dir);
  return dir;
}

/** A ConfigMap JSON of exactly `bytes` bytes (the create benchmark's is ≈ 1,400). */
function configMap(name: string, bytes: number): string {
  const head = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name }, data: { pad: '' } });
  const pad = 'x'.repeat(bytes - Buffer.byteLength(head));
  const json = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name }, data: { pad } });
  assert.equal(Buffer.byteLength(json), bytes);
  return json;
}

/** The stored bytes of each key, read without decompression. */
async function rawBytes(dir: string, keys: string[]): Promise<Buffer[]> {
  const raw = open<Buffer, string>({ path: dir, encoding: 'binary', compression: false });
  try {
    return keys.map((k) => {
      const v = raw.get(k);
      assert.ok(v, k);
      return Buffer.from(v);
    });
  } finally {
    await raw.close();
  }
}

test('stores values under the threshold as they are and longer ones compressed', async () => {
  assert.ok(COMPRESSION_THRESHOLD + 494 + 8 <= 2038, 'a value under the threshold stays inline with a 494-byte key');
  const dir = freshDir();
  const b = new LmdbBackend(dir);
  const values = {
    '/configmaps/bench-create/cm-1400': configMap('cm-1400', 1400),
    '/configmaps/bench-create/cm-below': configMap('cm-below', COMPRESSION_THRESHOLD - 1),
    '/configmaps/bench-create/cm-at': configMap('cm-at', COMPRESSION_THRESHOLD),
  };
  await b.commit(
    Object.entries(values).map(([key, value]) => ({ key, value })),
    1,
  );
  await b.close();
  const [cm1400, below, at] = await rawBytes(dir, Object.keys(values));
  assert.equal(cm1400!.toString('utf8'), values['/configmaps/bench-create/cm-1400'], '1,400 bytes: stored as they are');
  assert.equal(below!.toString('utf8'), values['/configmaps/bench-create/cm-below']);
  assert.ok(at![0]! >= 250, `at the threshold: first byte ${at![0]}, stored uncompressed`);
  assert.ok(at!.length < COMPRESSION_THRESHOLD);
});

test('reads back values an earlier build compressed from 512 bytes, and writes after them', async () => {
  const dir = freshDir();
  // the options of the builds of the fifth and sixth rounds (threshold 512)
  const old = open<string, string>({ ...storeOptions(dir), compression: { ...compressionOf(dir), threshold: 512 } });
  const before = new Map<string, string>();
  for (let i = 0; i < 20; i++) before.set(`/configmaps/ns-${i % 3}/old-${i}`, configMap(`old-${i}`, 600 + 40 * i));
  await old.transaction(() => {
    for (const [k, v] of before) old.putSync(k, v);
    old.putSync('\u0000meta/revision', '7');
  });
  await old.close();
  const stored = await rawBytes(dir, [...before.keys()]);
  assert.ok(
    stored.every((v) => v[0]! >= 250),
    'the earlier build stored them compressed',
  );

  let b = new LmdbBackend(dir);
  assert.equal(b.revision(), 7);
  const expected = new Map(before);
  const fresh = configMap('new-1', 1000);
  await b.commit([{ key: '/configmaps/ns-0/new-1', value: fresh }], 8);
  expected.set('/configmaps/ns-0/new-1', fresh);
  await b.close();

  b = new LmdbBackend(dir);
  try {
    const got = new Map<string, string>();
    for await (const page of b.range('/')) for (const e of page as StoredEntry[]) got.set(e.key, e.value);
    assert.deepEqual(got, expected);
  } finally {
    await b.close();
  }
});

function compressionOf(dir: string): object {
  const c = storeOptions(dir).compression;
  assert.ok(c && typeof c === 'object');
  return c;
}
