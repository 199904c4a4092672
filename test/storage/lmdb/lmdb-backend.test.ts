/**
 * The LMDB backend's storage format and what it keeps resident: one mapping of the data file
 * however far the store grows; values compressed against a frozen dictionary so a Pod stays
 * inline in its leaf page; stores written by earlier builds (uncompressed) read back unchanged;
 * a commit's writes, deletes and revision land together, and its B-tree writes run on lmdb-js's
 * write thread, not on the calling thread (the shard actor's, which serialises its shard's batches).
 */
import { describe, it, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { LmdbBackend } from '../../../src/storage/lmdb/lmdb-backend.js';
import { DICTIONARY } from '../../../src/storage/lmdb/dictionary.js';
import { EarlierCommitFailed, type StoredEntry, type Write } from '../../../src/storage/interface.js';
import { randomValues } from '../../helpers/random-json.js';

/** The hash of src/storage/lmdb/dictionary.ts' bytes when stores were first written with it. */
const DICTIONARY_SHA256 = '62c0edebcb96f94e0f676090e56607edf1b04847c2c6778b77c485c1d22b50fe';

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

/** A Pod-sized JSON value (about 2 KB, like the density scenario's Pods) that does not compress. */
function podJson(i: number): string {
  const noise = randomBytes(1000).toString('hex');
  return JSON.stringify({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: `p-${i}`, namespace: `ns-${i % 7}` },
    noise,
  });
}

async function fill(b: LmdbBackend, n: number, batch = 50): Promise<void> {
  for (let i = 0; i < n; i += batch) {
    const writes = [];
    for (let j = i; j < Math.min(n, i + batch); j++)
      writes.push({ key: `/pods/ns-${j % 7}/p-${j}`, value: podJson(j) });
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

/** A Pod as the server stores it (admission's service account volume, defaults, managed fields). */
function storedPod(i: number): string {
  const sa = 'plat-api-access-x7k2q';
  const mount = '/var/run/secrets/platform.io/serviceaccount';
  return JSON.stringify({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `web-${i}`,
      namespace: `team-${i % 13}`,
      uid: `0b7c${String(i).padStart(4, '0')}-5d1e-4c4a-9a57-3f0c2b9e${String(i).padStart(4, '0')}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: '2026-11-27T02:11:43Z',
      labels: { app: 'web' },
      managedFields: [
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-27T02:11:43Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': {} } },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example/web:1.0',
          volumeMounts: [{ name: sa, readOnly: true, mountPath: mount }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          resources: {},
        },
      ],
      serviceAccountName: 'default',
      volumes: [
        {
          name: sa,
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'plat-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
                },
              },
            ],
          },
        },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
    },
    status: { phase: 'Pending', qosClass: 'BestEffort' },
  });
}

/** Values of every shape the store meets: Pods, short values, UTF-8, a 1 MB value, random JSON. */
function mixedWrites(tag: string): Write[] {
  const writes: Write[] = [];
  for (let i = 0; i < 40; i++) writes.push({ key: `/pods/team-${i % 13}/web-${tag}-${i}`, value: storedPod(i) });
  writes.push({ key: `/configmaps/default/short-${tag}`, value: '{"kind":"ConfigMap","data":{"a":"b"}}' });
  writes.push({
    key: `/configmaps/default/utf8-${tag}`,
    value: JSON.stringify({ data: { s: 'é中\u2028😀'.repeat(200) } }),
  });
  writes.push({
    key: `/configmaps/default/big-${tag}`,
    value: JSON.stringify({ data: { b: 'x0123456789abcdef'.repeat(65536) } }),
  });
  randomValues(30).forEach((v, i) =>
    writes.push({ key: `/widgets/default/r-${tag}-${i}`, value: JSON.stringify({ v }) }),
  );
  return writes;
}

async function readAll(b: LmdbBackend): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const page of b.range('/')) for (const e of page as StoredEntry[]) out.set(e.key, e.value);
  return out;
}

describe('LmdbBackend storage format', () => {
  it('stores a Pod compressed and small enough to stay inline in a leaf page', async () => {
    const dir = freshDir();
    const b = new LmdbBackend(dir);
    await b.open();
    const pod = storedPod(7);
    await b.commit([{ key: '/pods/team-7/web-7', value: pod }], 1);
    await b.close();
    const raw = open<Buffer, string>({ path: dir, encoding: 'binary', compression: false });
    try {
      const bytes = raw.get('/pods/team-7/web-7');
      assert.ok(bytes);
      assert.ok(bytes[0]! >= 250, `first byte ${bytes[0]}: stored uncompressed`);
      // LMDB keeps a node inline up to about half a page (2,038 bytes with the key on 4 KiB pages)
      assert.ok(bytes.length < 1000, `${Buffer.byteLength(pod)} bytes stored as ${bytes.length}`);
    } finally {
      await raw.close();
    }
  });

  it('reads back byte for byte a store written uncompressed by earlier builds, then both kinds of values after new writes', async () => {
    const dir = freshDir();
    // the options of the builds before compression (lmdb-js' default map size, no compression)
    const old = open<string, string>({ path: dir, encoding: 'string', compression: false });
    const before = mixedWrites('old');
    await old.transaction(() => {
      for (const w of before) old.putSync(w.key, w.value!);
      old.putSync('\u0000meta/revision', '41');
    });
    await old.close();

    let b = new LmdbBackend(dir);
    await b.open();
    assert.equal(b.revision(), 41);
    const expected = new Map(before.map((w) => [w.key, w.value!]));
    assert.deepEqual(await readAll(b), expected);
    const after = mixedWrites('new');
    await b.commit(
      [...after, { key: before[0]!.key, value: storedPod(99) }, { key: before[1]!.key, value: undefined }],
      42,
    );
    for (const w of after) expected.set(w.key, w.value!);
    expected.set(before[0]!.key, storedPod(99));
    expected.delete(before[1]!.key);
    await b.close();

    b = new LmdbBackend(dir);
    await b.open();
    try {
      assert.equal(b.revision(), 42);
      const got = await readAll(b);
      assert.equal(got.size, expected.size);
      for (const [k, v] of expected) assert.equal(got.get(k), v, k);
    } finally {
      await b.close();
    }
  });

  it('keeps the frozen dictionary byte for byte (compressed values on disk depend on it)', () => {
    assert.equal(DICTIONARY.length % 8, 0);
    assert.equal(createHash('sha256').update(DICTIONARY).digest('hex'), DICTIONARY_SHA256);
  });
});

function withBackend(run: (b: LmdbBackend) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = freshDir();
    const b = new LmdbBackend(join(dir, 'shard'));
    try {
      await run(b);
    } finally {
      await b.close();
    }
  };
}

const value = 'v'.repeat(1400);
const cmWrites = (from: number, n: number, prefix = '/configmaps/ns/c-'): Write[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}${from + i}`, value }));

async function storedUnder(b: LmdbBackend, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const page of b.range(prefix)) for (const e of page) out.set(e.key, e.value);
  return out;
}

test(
  'a commit stores its writes, deletes and revision together; written() comes before it resolves',
  withBackend(async (b) => {
    await b.commit(cmWrites(0, 3), 7);
    let wrote = false;
    const done = b.commit([{ key: '/configmaps/ns/c-1', value: undefined }, ...cmWrites(3, 1)], 9, () => {
      wrote = true;
    });
    await done;
    assert.equal(wrote, true);
    assert.equal(b.revision(), 9);
    assert.deepEqual([...(await storedUnder(b, '/configmaps/ns/')).keys()].sort(), [
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
    await b.commit([...cmWrites(0, n), { key: '/configmaps/ns/c-0', value: undefined }], 2);
    assert.deepEqual(calls, ['batch']);
    assert.equal((await storedUnder(b, '/configmaps/ns/')).size, n - 1);
    assert.equal(b.revision(), 2);
  }),
);

test(
  "a commit is acknowledged on its own transaction's flush, not on that of a commit queued once it was written",
  withBackend(async (b) => {
    // lmdb-js's `db.flushed` is a thenable whose `then` picks the flush of the newest writes
    // queued at that moment; the shard queues its next batch's commit from written(), so a
    // flush taken after that waited for the next transaction's commit and fsync as well
    const db = (b as unknown as { db: { ifVersion: (...a: unknown[]) => unknown; flushed: PromiseLike<unknown> } }).db;
    const real = db.flushed;
    let batches = 0;
    const seen: number[] = [];
    // a commit queues its block with `batch` or, conditional on the one before, `ifVersion`
    // (lmdb-js's `batch` is an `ifVersion` without a condition: one count per commit)
    const queue = db.ifVersion.bind(db);
    db.ifVersion = (...a: unknown[]) => {
      batches++;
      return queue(...a);
    };
    Object.defineProperty(db, 'flushed', {
      configurable: true,
      get: () => ({
        // biome-ignore lint/suspicious/noThenProperty: lmdb-js's db.flushed is a thenable; the spy stands in for it
        then(ok: (v: unknown) => unknown, fail: (e: unknown) => unknown) {
          seen.push(batches);
          return real.then(ok, fail);
        },
      }),
    });
    let second: Promise<void> | undefined;
    await b.commit(cmWrites(0, 5), 1, () => {
      second = b.commit(cmWrites(5, 5), 2);
    });
    await second;
    // the first commit's flush was taken while its own batch was the newest (1), the second's at 2
    assert.deepEqual(seen, [1, 2]);
    assert.equal(b.revision(), 2);
    assert.equal((await storedUnder(b, '/configmaps/ns/')).size, 10);
  }),
);

test(
  'a transaction queued after one that failed stores nothing; later commits chain from the last committed one',
  withBackend(async (b) => {
    await b.commit(cmWrites(0, 2, '/configmaps/ns/ok-'), 1);
    // the next transaction fails as a refused one would (its token is never written): its
    // condition names a token that does not exist
    (b as unknown as { chainTip: string }).chainTip = '\u0000meta/commit/never';
    let later: Promise<void> | undefined;
    const failed = b.commit(cmWrites(0, 3, '/configmaps/ns/lost-'), 2, () => {
      // queued before the first is known failed, as the shard queues its next batch
      later = b.commit(cmWrites(0, 3, '/configmaps/ns/after-'), 3);
    });
    await assert.rejects(failed, EarlierCommitFailed);
    assert.ok(later);
    await assert.rejects(later, EarlierCommitFailed);
    await b.commit(cmWrites(0, 1, '/configmaps/ns/next-'), 4);
    assert.deepEqual([...(await storedUnder(b, '/configmaps/ns/')).keys()].sort(), [
      '/configmaps/ns/next-0',
      '/configmaps/ns/ok-0',
      '/configmaps/ns/ok-1',
    ]);
    assert.equal(b.revision(), 4);
    // range() returns objects only: no revision, no chain token
    assert.deepEqual(
      [...(await storedUnder(b, '')).keys()].filter((k) => !k.startsWith('/configmaps/')),
      [],
    );
  }),
);

test('a reopened store continues the chain from its stored token', async () => {
  const path = join(freshDir(), 'shard');
  const first = new LmdbBackend(path);
  await first.commit(cmWrites(0, 1), 1);
  await first.close();
  const again = new LmdbBackend(path);
  try {
    let second: Promise<void> | undefined;
    await again.commit(cmWrites(1, 1), 2, () => {
      second = again.commit(cmWrites(2, 1), 3);
    });
    await second;
    assert.equal(again.revision(), 3);
    assert.equal((await storedUnder(again, '/configmaps/ns/')).size, 3);
  } finally {
    await again.close();
  }
});
