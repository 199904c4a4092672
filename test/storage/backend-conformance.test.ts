/**
 * One conformance suite for the storage Backend contract (src/storage/interface.ts), run
 * against every implementation: LMDB in a temp dir, and etcd against a real etcd process.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, StoredEntry, Write } from '../../src/storage/interface.js';
import { LmdbBackend } from '../../src/storage/lmdb/lmdb-backend.js';
import { EtcdBackend } from '../../src/storage/etcd/etcd-backend.js';
import type { EtcdConfig } from '../../src/storage/etcd/etcd-client.js';
import { startEtcd, type TestEtcd } from '../helpers/etcd.js';

/** A fresh, empty store per case; reopen() closes the backend and opens the same store again. */
interface Opened {
  backend: Backend;
  reopen(): Promise<Opened>;
}
interface Subject {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  fresh(): Promise<Opened>;
}

async function opened(make: () => Backend): Promise<Opened> {
  const backend = make();
  await backend.open();
  return {
    backend,
    async reopen() {
      await backend.close();
      return opened(make);
    },
  };
}

function lmdbSubject(): Subject {
  const dirs: string[] = [];
  const backends: Backend[] = [];
  return {
    name: 'LmdbBackend',
    async setup() {},
    async teardown() {
      for (const b of backends) await b.close().catch(() => {});
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
    fresh() {
      const dir = mkdtempSync(join(tmpdir(), 'plat-lmdb-'));
      dirs.push(dir);
      return opened(() => {
        const b = new LmdbBackend(dir);
        backends.push(b);
        return b;
      });
    },
  };
}

function etcdSubject(): Subject {
  let etcd: TestEtcd | undefined;
  let n = 0;
  const backends: Backend[] = [];
  return {
    name: 'EtcdBackend',
    async setup() {
      etcd = await startEtcd();
    },
    async teardown() {
      for (const b of backends) await b.close().catch(() => {});
      await etcd?.cleanup();
    },
    fresh() {
      const cfg: EtcdConfig = { servers: [etcd!.url], prefix: '/conformance', compactionIntervalMs: 0 };
      const space = `case-${n++}`;
      return opened(() => {
        const b = new EtcdBackend(cfg, space);
        backends.push(b);
        return b;
      });
    },
  };
}

async function all(b: Backend, prefix = ''): Promise<StoredEntry[]> {
  const out: StoredEntry[] = [];
  for await (const page of b.range(prefix)) out.push(...page);
  return out;
}

const puts = (entries: [string, string][]): Write[] => entries.map(([key, value]) => ({ key, value }));
const byKey = (a: StoredEntry, b: StoredEntry) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));

function conformance(s: Subject): void {
  describe(`Backend conformance: ${s.name}`, () => {
    before(() => s.setup());
    after(() => s.teardown());

    it('starts empty at revision 0', async () => {
      const { backend } = await s.fresh();
      assert.equal(backend.revision(), 0);
      assert.deepEqual(await all(backend), []);
    });

    it('returns committed puts in key order with exact values', async () => {
      const { backend } = await s.fresh();
      const entries: [string, string][] = [
        ['/configmaps/ns/b', '{"b":1}'],
        ['apps/deployments/ns/a', '{"d":2}'],
        ['/configmaps/ns/a', '{"a":3}'],
        ['/configmaps/default/z', '{"z":4}'],
      ];
      await backend.commit(puts(entries), 7);
      assert.equal(backend.revision(), 7);
      const expected = entries.map(([key, value]) => ({ key, value })).sort(byKey);
      assert.deepEqual(await all(backend), expected);
    });

    it('deletes keys, and deleting a missing key is not an error', async () => {
      const { backend } = await s.fresh();
      await backend.commit(
        puts([
          ['k/a', '1'],
          ['k/b', '2'],
          ['k/c', '3'],
        ]),
        1,
      );
      await backend.commit(
        [
          { key: 'k/b', value: undefined },
          { key: 'k/missing', value: undefined },
        ],
        2,
      );
      assert.deepEqual(await all(backend), [
        { key: 'k/a', value: '1' },
        { key: 'k/c', value: '3' },
      ]);
      assert.equal(backend.revision(), 2);
    });

    it('applies writes of one key in a commit in order (the last one wins)', async () => {
      const { backend } = await s.fresh();
      await backend.commit(
        [
          { key: 'k/x', value: 'v1' },
          { key: 'k/y', value: 'y' },
          { key: 'k/x', value: 'v2' },
          { key: 'k/y', value: undefined },
          { key: 'k/z', value: undefined },
          { key: 'k/z', value: 'z' },
        ],
        3,
      );
      assert.deepEqual(await all(backend), [
        { key: 'k/x', value: 'v2' },
        { key: 'k/z', value: 'z' },
      ]);
    });

    it('makes every write of a commit visible together with its revision', async () => {
      const { backend, reopen } = await s.fresh();
      const writes = Array.from({ length: 100 }, (_, i) => ({
        key: `t/${String(i).padStart(3, '0')}`,
        value: `{"i":${i}}`,
      }));
      await backend.commit(writes, 100);
      assert.equal(backend.revision(), 100);
      assert.deepEqual(await all(backend), writes);
      const again = await reopen();
      assert.equal(again.backend.revision(), 100);
      assert.deepEqual(await all(again.backend), writes);
    });

    it('keeps the revision and the data across close and reopen', async () => {
      const { backend, reopen } = await s.fresh();
      await backend.commit(puts([['r/a', 'a']]), 5);
      await backend.commit(puts([['r/b', 'b']]), 9);
      const again = await reopen();
      assert.equal(again.backend.revision(), 9);
      assert.deepEqual(await all(again.backend), [
        { key: 'r/a', value: 'a' },
        { key: 'r/b', value: 'b' },
      ]);
    });

    it('isolates prefixes: range("a/") excludes "ab/"', async () => {
      const { backend } = await s.fresh();
      await backend.commit(
        puts([
          ['a/1', 'x'],
          ['ab/1', 'y'],
          ['a/2', 'z'],
          ['b/1', 'w'],
          ['a', 'bare'],
        ]),
        1,
      );
      assert.deepEqual(
        (await all(backend, 'a/')).map((e) => e.key),
        ['a/1', 'a/2'],
      );
      assert.deepEqual(
        (await all(backend, 'ab/')).map((e) => e.key),
        ['ab/1'],
      );
      assert.deepEqual(await all(backend, 'c/'), []);
    });

    it('stores unicode values byte for byte', async () => {
      const { backend, reopen } = await s.fresh();
      const values = [
        '{"s":"grüße"}',
        '{"s":"日本語"}',
        '{"s":"🙂👍🏽"}',
        '{"s":"e\u0301 \u2028 \u00a0"}',
        '{"s":"\\u0000 escaped"}',
      ];
      await backend.commit(
        values.map((value, i) => ({ key: `u/${i}`, value })),
        2,
      );
      const again = await reopen();
      assert.deepEqual(
        (await all(again.backend)).map((e) => e.value),
        values,
      );
    });

    it('commits 10,000 values of 1 KB in batches and loads them back', async (t) => {
      const { backend, reopen } = await s.fresh();
      const pad = 'x'.repeat(1000);
      const value = (i: number) => `{"i":${i},"p":"${pad}"}`;
      const N = 10_000,
        BATCH = 500;
      let started = Date.now();
      for (let i = 0; i < N; i += BATCH) {
        const writes = Array.from({ length: BATCH }, (_, j) => ({
          key: `big/${String(i + j).padStart(5, '0')}`,
          value: value(i + j),
        }));
        await backend.commit(writes, i + BATCH);
      }
      const commitMs = Date.now() - started;
      const again = await reopen();
      started = Date.now();
      let count = 0,
        pages = 0;
      for await (const page of again.backend.range('big/')) {
        pages++;
        for (const e of page) {
          assert.equal(e.key, `big/${String(count).padStart(5, '0')}`);
          assert.equal(e.value, value(count));
          count++;
        }
      }
      t.diagnostic(
        `${s.name}: commit ${N} x 1 KB in batches of ${BATCH}: ${commitMs} ms; load: ${Date.now() - started} ms in ${pages} pages`,
      );
      assert.equal(count, N);
      assert.equal(again.backend.revision(), N);
    });
  });
}

conformance(lmdbSubject());
conformance(etcdSubject());
