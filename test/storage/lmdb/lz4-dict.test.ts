/**
 * The LMDB backend's own LZ4 compression (src/storage/lmdb/lz4-dict.ts): values it compresses
 * on the calling thread are stored in lmdb-js's format, so a store opened with the shared
 * options (src/storage/lmdb/store-options.ts) reads them back byte for byte through lmdb-js's
 * own decompression; they are no larger than lmdb-js's compression would make them (the pages
 * per object must not grow); and LmdbBackend.commit stores values compressed this way instead of
 * handing each one to lmdb-js's per-value compression work item.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { DICTIONARY } from '../../../src/storage/lmdb/dictionary.js';
import { DictionaryCompressor } from '../../../src/storage/lmdb/lz4-dict.js';
import { LmdbBackend } from '../../../src/storage/lmdb/lmdb-backend.js';
import { COMPRESSION_THRESHOLD, storeOptions } from '../../../src/storage/lmdb/store-options.js';
import { randomValues } from '../../helpers/random-json.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plat-lz4-dict-'));
  dirs.push(dir);
  return dir;
}

/** A stored ConfigMap of the create bench's shape (≈ 1.4 KB). */
function configMap(i: number): string {
  return JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name: `c-${i}-run`,
      namespace: 'bench-create',
      uid: `0b6f0c1e-8a5b-4c3d-9e2f-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: '2026-11-27T10:00:00Z',
      labels: { bench: 'create' },
      managedFields: [
        {
          manager: 'wrk',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-27T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { '.': {}, 'f:pad': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:bench': {} } } },
        },
      ],
    },
    data: { pad: 'x'.repeat(880) },
  });
}

/** A stored Pod as admission leaves it (≈ 2.1 KB, the density scenario's shape). */
function pod(i: number): string {
  const sa = `kube-api-access-${(i * 7919).toString(36).padStart(5, '0')}`;
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
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example/web:1.0',
          volumeMounts: [{ name: sa, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          resources: {},
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 5000}`,
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
    status: { phase: 'Pending', qosClass: 'BestEffort' },
  });
}

/** Values of every kind the compressor must get right: short, at the LZ4 limits, runs, noise, non-ASCII. */
function testValues(): string[] {
  const out: string[] = [];
  for (let n = 0; n <= 40; n++) out.push('{"k":"'.concat('abcab'.repeat(8)).slice(0, n));
  for (const n of [511, 512, 513, 4096, 70_000]) out.push(`{"pad":"${'x'.repeat(n)}"}`);
  for (let i = 0; i < 20; i++) out.push(configMap(i), pod(i));
  for (const v of randomValues(300)) out.push(JSON.stringify({ v, again: v }) ?? 'null');
  out.push(JSON.stringify({ noise: randomBytes(3000).toString('hex') }));
  out.push(JSON.stringify({ noise: randomBytes(3000).toString('base64') }));
  out.push(JSON.stringify({ text: 'é€😀\u2028'.repeat(400), tail: '🙂'.repeat(300) }));
  // a match reaching back over 64 KB is not allowed: a repeat 70 KB apart must come out right
  const chunk = randomBytes(2000).toString('hex');
  out.push(JSON.stringify({ a: chunk, gap: randomBytes(35_000).toString('hex'), b: chunk }));
  return out;
}

describe('DictionaryCompressor', () => {
  it("writes lmdb-js's format: the store's own reads return every value byte for byte", async () => {
    const dir = freshDir();
    const db = open<string, string>(storeOptions(dir));
    const raw = db.openDB<Buffer, string>(null as unknown as string, { compression: false, encoding: 'binary' });
    const c = new DictionaryCompressor(DICTIONARY);
    const values = testValues();
    let compressed = 0;
    await raw.transaction(() => {
      values.forEach((v, i) => {
        const z = c.compress(v);
        if (z) {
          compressed++;
          assert.equal(z[0], 254, `value ${i}: lmdb-js's marker`);
          assert.equal(z.readUIntBE(1, 3), Buffer.byteLength(v), `value ${i}: its length`);
        }
        void raw.put(`/v/${i}`, z ?? Buffer.from(v));
      });
    });
    assert.ok(compressed > values.length / 2, `${compressed} of ${values.length} compressed`);
    values.forEach((v, i) => assert.equal(db.get(`/v/${i}`), v, `value ${i} (${v.length} chars)`));
    await db.close();
  });

  it('leaves out values under minBytes of UTF-8 and values it cannot shorten', () => {
    const c = new DictionaryCompressor(DICTIONARY);
    const ascii = `{"a":"${'q'.repeat(COMPRESSION_THRESHOLD - 9)}"}`;
    assert.equal(Buffer.byteLength(ascii), COMPRESSION_THRESHOLD - 1);
    assert.equal(c.compress(ascii, COMPRESSION_THRESHOLD), undefined);
    assert.ok(c.compress(`${ascii} `, COMPRESSION_THRESHOLD));
    // fewer UTF-16 units than the threshold, more UTF-8 bytes: lmdb-js counts bytes, so does this
    assert.ok(c.compress(`{"a":"${'é'.repeat(300)}"}`, COMPRESSION_THRESHOLD));
    assert.equal(c.compress(randomBytes(600).toString('base64')), undefined);
  });

  it('lets the scratch room of a large value go after it (a 1 MB object does not stay resident per shard)', () => {
    const c = new DictionaryCompressor(DICTIONARY);
    const scratch = (): number => {
      const inner = c as unknown as { buf: Buffer; out: Buffer };
      return inner.buf.length + inner.out.length;
    };
    const before = scratch();
    const big = JSON.stringify({ data: randomBytes(500_000).toString('hex') });
    c.compress(big);
    assert.equal(scratch(), before);
    const cm = configMap(1);
    assert.deepEqual(c.compress(cm), new DictionaryCompressor(DICTIONARY).compress(cm));
  });

  it("is no larger than lmdb-js's own compression of the same values (pages per object)", async () => {
    const dir = freshDir();
    const db = open<string, string>(storeOptions(dir));
    const raw = db.openDB<Buffer, string>(null as unknown as string, { compression: false, encoding: 'binary' });
    const c = new DictionaryCompressor(DICTIONARY);
    for (const [what, value] of [
      ['ConfigMaps', configMap],
      ['Pods', pod],
    ] as const) {
      let ours = 0;
      let theirs = 0;
      await db.transaction(() => {
        for (let i = 0; i < 50; i++) void db.put(`/${what}/${i}`, value(i));
      });
      for (let i = 0; i < 50; i++) {
        theirs += raw.get(`/${what}/${i}`)?.length ?? Number.NaN;
        ours += c.compress(value(i))?.length ?? Number.NaN;
      }
      assert.ok(ours <= theirs, `ours ${ours} B, lmdb-js ${theirs} B for 50 ${what}`);
    }
    await db.close();
  });
});

describe('LmdbBackend compression', () => {
  it('stores the values a commit compressed on its own thread, and reads them back', async () => {
    const dir = freshDir();
    const b = new LmdbBackend(dir);
    await b.open();
    const small = `{"a":"${'q'.repeat(COMPRESSION_THRESHOLD - 9)}"}`;
    const wide = `{"a":"${'é'.repeat(300)}"}`;
    const writes = [
      { key: '/configmaps/ns/c-1', value: configMap(1) },
      { key: '/configmaps/ns/c-2', value: small },
      { key: '/configmaps/ns/c-3', value: wide },
    ];
    await b.commit(writes, 1);
    const read = new Map<string, string>();
    for await (const page of b.range('/configmaps/')) for (const e of page) read.set(e.key, e.value);
    assert.deepEqual(read, new Map(writes.map((w) => [w.key, w.value])));
    await b.close();
    const raw = open<Buffer, string>({ path: dir, encoding: 'binary', compression: false });
    try {
      const c = new DictionaryCompressor(DICTIONARY);
      // byte for byte this compressor's output (lmdb-js's own LZ4 hashes and matches differently)
      assert.deepEqual(raw.get('/configmaps/ns/c-1'), c.compress(configMap(1)));
      assert.deepEqual(raw.get('/configmaps/ns/c-3'), c.compress(wide));
      assert.deepEqual(raw.get('/configmaps/ns/c-2'), Buffer.from(small));
    } finally {
      await raw.close();
    }
  });
});

/** A seeded generator (so a failure names a value that can be made again): mixed alphabets, copies from earlier in the text, long runs. */
function seededValues(count: number, seed: number): string[] {
  let s = seed;
  const rnd = (): number => {
    s = (s * 1_103_515_245 + 12_345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const words = ['ab', 'abc', '{"a":1}', 'metadata', 'ü€😀', 'x', '\u0000', '"name":"', 'spec', 'zzzzzzzz'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = Math.floor(rnd() ** 3 * 100_000);
    const mode = i % 4;
    let v = '';
    while (v.length < n) {
      if (mode === 0) v += String.fromCharCode(32 + Math.floor(rnd() * 95));
      else if (mode === 1) v += words[Math.floor(rnd() * words.length)];
      else if (mode === 2)
        v += rnd() < 0.5 ? words[Math.floor(rnd() * words.length)] : String.fromCharCode(Math.floor(rnd() * 0xd7ff));
      else if (v.length > 10 && rnd() < 0.3) {
        const from = Math.floor(rnd() * v.length);
        v += v.slice(from, from + Math.floor(rnd() * 300));
      } else v += String.fromCharCode(40 + Math.floor(rnd() * 10));
    }
    // well-formed text (a slice can split a surrogate pair, which UTF-8 cannot carry)
    out.push(Buffer.from(v.slice(0, n)).toString());
  }
  return out;
}

describe('DictionaryCompressor, seeded values', () => {
  it('1,200 values of mixed shapes (up to 100,000 chars) read back byte for byte through lmdb-js', async () => {
    const dir = freshDir();
    const db = open<string, string>(storeOptions(dir));
    const raw = db.openDB<Buffer | string, string>(null as unknown as string, {
      compression: false,
      encoding: 'binary',
    });
    const c = new DictionaryCompressor(DICTIONARY);
    const values = seededValues(1_200, 7);
    let compressed = 0;
    await raw.transaction(() => {
      values.forEach((v, i) => {
        const z = c.compress(v, COMPRESSION_THRESHOLD);
        if (z) compressed++;
        void raw.put(`/s/${i}`, z ?? v);
      });
    });
    assert.ok(compressed > values.length / 2, `${compressed} of ${values.length} compressed`);
    values.forEach((v, i) => assert.equal(db.get(`/s/${i}`), v, `seeded value ${i} (${v.length} chars)`));
    await db.close();
  });
});
