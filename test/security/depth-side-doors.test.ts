/**
 * Issue 26 item 3: the depth limit has no side doors, and an object deeper than it (stored by an
 * older version) stays readable and deletable. One limit (MAX_NESTING_DEPTH, 1,000 levels, the
 * whole object being level 1) holds for JSON, CBOR and Protobuf, counted across RawExtension
 * envelopes; an over-deep stored object is served in JSON, CBOR, Protobuf and Table (GET, LIST,
 * WATCH) and is removed by DELETE, deletecollection and namespace termination.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeCbor } from '../../src/codec/cbor.js';
import { PROTOBUF_MAGIC } from '../../src/codec/protobuf.js';
import { varintLength } from '../../src/codec/protobuf/wire.js';
import { LmdbBackend } from '../../src/storage/lmdb/lmdb-backend.js';
import { startServer, stopServers, request, type TestServer, type Reply } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';
import { until } from '../helpers/poll.js';

const GATES = ['--feature-gates', 'CBORServingAndStorage=true', '--storage-backend', 'lmdb'];
const CBOR = 'application/cbor';
const PROTOBUF = 'application/vnd.platform.protobuf';
const TABLE = 'application/json;as=Table;v=v1;g=meta.plat.io';
const REVS = '/apis/apps/v1/namespaces/default/controllerrevisions';
/** deeper than every native recursion of the runtime (JSON.stringify in a worker: ~16,000) */
const OLD_DEPTH = 20_000;

let s: TestServer;
before(async () => {
  s = await startServer(GATES);
});
after(() => stopServers([s]));

async function send(
  path: string,
  body: Uint8Array<ArrayBuffer>,
  contentType: string,
): Promise<Reply & { elapsed: number }> {
  const started = Date.now();
  const r = await request(s.url, 'POST', path, body, { 'content-type': contentType, accept: 'application/json' });
  return { ...r, elapsed: Date.now() - started };
}

/**
 * A ConfigMap whose managedFields[0].fieldsV1 holds `n` nested maps {"f:a": …} around {} in
 * CBOR bytes (cbor-x's own encoder overflows the stack on such values): the fieldsV1 map is
 * level 5, so the deepest map is level 5 + n.
 */
function deepCborConfigMap(name: string, n: number): Uint8Array<ArrayBuffer> {
  const mark = 'PLACEHOLDER-XYZW';
  const outer = Buffer.from(
    encodeCbor({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        managedFields: [
          { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: mark },
        ],
      },
    }),
  );
  const at = outer.indexOf(Buffer.from([0x70, ...Buffer.from(mark)]));
  const level = Buffer.from([0xa1, 0x63, ...Buffer.from('f:a')]);
  const nested = Buffer.concat([...Array<Buffer>(n).fill(level), Buffer.from([0xa0])]);
  return new Uint8Array(Buffer.concat([outer.subarray(0, at), nested, outer.subarray(at + 1 + mark.length)]));
}

const deepJson = (n: number): string => '{"f:a":'.repeat(n) + '{}' + '}'.repeat(n);

test('CBOR: an 8,000-deep ConfigMap is 400 BadRequest and nothing is stored; the limit is the JSON one, level for level', async () => {
  const CMS = '/api/v1/namespaces/default/configmaps';
  const deep = await send(CMS, deepCborConfigMap('cbor-deep', 8000), CBOR);
  assertStatus(deep, 400, 'BadRequest');
  assert.match(deep.json.message, /exceeded max nested level 1000/);
  assert.equal((await request(s.url, 'GET', `${CMS}/cbor-deep`)).status, 404);
  // level 1,001 is refused in CBOR as in JSON; level 1,000 is stored in both
  assertStatus(await send(CMS, deepCborConfigMap('cbor-1001', 996), CBOR), 400, 'BadRequest');
  const json = (name: string, n: number) =>
    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${deepJson(n)}}]}}`;
  assertStatus(await request(s.url, 'POST', CMS, json('json-1001', 996)), 400, 'BadRequest');
  const ok = await send(CMS, deepCborConfigMap('cbor-1000', 995), CBOR);
  assert.equal(ok.status, 201, ok.text.slice(0, 300));
  assert.equal((await request(s.url, 'POST', CMS, json('json-1000', 995))).status, 201);
});

/**
 * A ControllerRevision whose data is a RawExtension holding another enveloped
 * ControllerRevision, `n` times around an innermost one, each named "x", built from the inside
 * out in one concatenation: the innermost revision is level n + 1 and its metadata n + 2.
 */
function nestedRevisions(n: number): Uint8Array<ArrayBuffer> {
  const typeMeta = Buffer.from([0x0a, 7, ...Buffer.from('apps/v1'), 0x12, 18, ...Buffer.from('ControllerRevision')]);
  const tail = Buffer.from([0x1a, 0x00, 0x22, 0x00]);
  const varint = (v: number): number[] => {
    const out: number[] = [];
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
    return out;
  };
  const envelope = (raw: Buffer): Buffer =>
    Buffer.concat([
      PROTOBUF_MAGIC,
      Buffer.from([0x0a, typeMeta.length]),
      typeMeta,
      Buffer.from([0x12, ...varint(raw.length)]),
      raw,
      tail,
    ]);
  // metadata {name: "x"}; the innermost ControllerRevision {metadata, revision 1}
  const name = Buffer.from([0x0a, 0x03, 0x0a, 0x01, 0x78]);
  const inner = envelope(Buffer.concat([name, Buffer.from([0x18, 0x01])]));
  const heads: Buffer[] = [];
  let size = inner.length;
  for (let i = 0; i < n; i++) {
    const data = 1 + varintLength(size) + size; // RawExtension {raw: <envelope>}
    const raw = name.length + 1 + varintLength(data) + data; // ControllerRevision {metadata, data: <RawExtension>}
    heads.push(
      Buffer.concat([
        PROTOBUF_MAGIC,
        Buffer.from([0x0a, typeMeta.length]),
        typeMeta,
        Buffer.from([0x12, ...varint(raw)]),
        name,
        Buffer.from([0x12, ...varint(data), 0x0a, ...varint(size)]),
      ]),
    );
    size = heads[i]!.length + size + tail.length;
  }
  return new Uint8Array(Buffer.concat([...heads.reverse(), inner, ...Array<Buffer>(n).fill(tail)]));
}

test('Protobuf: 4,000 nested RawExtension envelopes are 400 promptly; the depth counts across envelopes', async () => {
  const r = await send(REVS, nestedRevisions(4000), PROTOBUF);
  assertStatus(r, 400, 'BadRequest');
  assert.match(r.json.message, /exceeded max depth of 1000/);
  assert.ok(r.elapsed < 5000, `answered after ${r.elapsed} ms`);
  // 999 envelopes: the innermost metadata is level 1,001; 998: level 1,000 is decoded
  const over = await send(REVS, nestedRevisions(999), PROTOBUF);
  assertStatus(over, 400, 'BadRequest');
  assert.match(over.json.message, /exceeded max depth of 1000/);
  const at = await send(REVS, nestedRevisions(998), PROTOBUF);
  assert.equal(at.status, 201, at.text.slice(0, 300));
});

/**
 * With the server stopped, rewrites the stored ConfigMaps `<namespace>/<name>` so that their
 * managedFields[0].fieldsV1 nests OLD_DEPTH levels: what an older version let in. The JSON text
 * is spliced (the test's own JSON.stringify would overflow on such a value).
 */
async function deepenStored(dataDir: string, keys: string[]): Promise<number> {
  const fields = `{"manager":"old","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${deepJson(OLD_DEPTH)}}`;
  let changed = 0;
  for (const dir of readdirSync(dataDir).filter((d) => d.startsWith('shard-'))) {
    const backend = new LmdbBackend(join(dataDir, dir));
    const writes = [];
    for await (const page of backend.range('')) {
      for (const e of page) {
        if (!keys.some((k) => e.key.endsWith(`/configmaps/${k}`))) continue;
        const obj = JSON.parse(e.value);
        obj.metadata.managedFields = ['MARK'];
        writes.push({ key: e.key, value: JSON.stringify(obj).replace('"MARK"', fields) });
      }
    }
    if (writes.length) await backend.commit(writes, backend.revision());
    changed += writes.length;
    await backend.close();
  }
  return changed;
}

/** Reads a watch from resourceVersion 0 until every name appears in the stream (its initial events). */
async function watchUntil(path: string, accept: string, names: string[]): Promise<Buffer> {
  const ac = new AbortController();
  const res = await fetch(`${s.url}${path}?watch=1&resourceVersion=0&timeoutSeconds=10`, {
    headers: { accept },
    signal: ac.signal,
  });
  assert.equal(res.status, 200, `watch as ${accept}`);
  const chunks: Buffer[] = [];
  const reader = res.body!.getReader();
  try {
    for (let i = 0; i < 10_000; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      const all = Buffer.concat(chunks);
      if (names.every((n) => all.includes(n))) return all;
    }
  } finally {
    ac.abort();
  }
  return assert.fail(
    `watch as ${accept} ended without ${names.join(', ')}: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`,
  );
}

const deepest = (text: string): number => {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
};

/** GET, LIST and WATCH of the namespace holding deep-a and deep-b (over-deep) and plain-c, in every encoding (YAML: GET and LIST); the audit event of a GET. */
async function readable(CMS: string, names: string[], auditLog: string): Promise<void> {
  const json = await request(s.url, 'GET', CMS);
  assert.equal(json.status, 200, json.text.slice(0, 300));
  assert.deepEqual(
    json.json.items.map((o: { metadata: { name: string } }) => o.metadata.name),
    names,
  );
  assert.equal(deepest(json.text), OLD_DEPTH + 7, 'the list holds the whole object');
  for (const accept of [CBOR, PROTOBUF, TABLE, 'application/yaml']) {
    for (const path of [CMS, `${CMS}/deep-a`]) {
      const r = await fetch(s.url + path, { headers: { accept } });
      const body = Buffer.from(await r.arrayBuffer());
      assert.equal(r.status, 200, `${accept} ${path}: ${body.toString('latin1').slice(0, 300)}`);
      assert.ok(body.length > OLD_DEPTH * 5, `${accept} ${path}: the whole object (${body.length} bytes)`);
      if (path === CMS) for (const n of names) assert.ok(body.includes(n), `${accept}: ${n} listed`);
    }
  }
  for (const accept of ['application/json', CBOR, PROTOBUF]) await watchUntil(CMS, accept, names);
  // not compressed: the auditor reads JSON bodies as they are sent
  const get = await request(s.url, 'GET', `${CMS}/deep-a`, undefined, { 'accept-encoding': 'identity' });
  assert.equal(get.status, 200);
  const id = get.headers.get('audit-id')!;
  const line = await until(
    async () =>
      readFileSync(auditLog, 'utf8')
        .split('\n')
        .find((l) => l.includes(id) && l.includes('"ResponseComplete"')),
    'the audit event of the GET',
  );
  assert.ok(line.length > OLD_DEPTH * 7, `the audit event holds the object (${line.length} characters)`);
}

test('an object stored deeper than the limit is readable in every encoding (GET, LIST, WATCH) and deletable', async () => {
  const CMS = '/api/v1/namespaces/old/configmaps';
  const names = ['deep-a', 'deep-b', 'plain-c'];
  for (const ns of ['old', 'old-ns'])
    assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const objects = [
    ['old', 'deep-a', {}, []],
    ['old', 'deep-b', { deep: 'b' }, []],
    ['old', 'plain-c', {}, []],
    ['old-ns', 'deep-d', {}, []],
    ['old-ns', 'deep-e', {}, ['example.com/hold']],
  ] as const;
  for (const [ns, name, labels, finalizers] of objects) {
    const r = await request(s.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name, labels, finalizers },
      data: { k: 'v' },
    });
    assert.equal(r.status, 201, r.text);
  }
  await s.stop();
  assert.equal(await deepenStored(s.dataDir, ['old/deep-a', 'old/deep-b', 'old-ns/deep-d', 'old-ns/deep-e']), 4);
  // audited at RequestResponse: the event carries the object
  const auditDir = mkdtempSync(join(tmpdir(), 'plat-depth-audit-'));
  const auditLog = join(auditDir, 'audit.log');
  writeFileSync(
    join(auditDir, 'policy.yaml'),
    'apiVersion: audit.plat.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  namespaces: ["old"]\n- level: None\n',
  );
  const dataDir = s.dataDir;
  s = await startServer(
    [...GATES, '--audit-policy-file', join(auditDir, 'policy.yaml'), '--audit-log-path', auditLog],
    dataDir,
  );
  try {
    await readable(CMS, names, auditLog);
  } finally {
    rmSync(auditDir, { recursive: true, force: true });
  }

  const del = await request(s.url, 'DELETE', `${CMS}/deep-a`);
  assert.equal(del.status, 200, del.text.slice(0, 300));
  assert.equal((await request(s.url, 'GET', `${CMS}/deep-a`)).status, 404);
  const coll = await request(s.url, 'DELETE', `${CMS}?labelSelector=deep%3Db`);
  assert.equal(coll.status, 200, coll.text.slice(0, 300));
  assert.equal((await request(s.url, 'GET', `${CMS}/deep-b`)).status, 404);
  assert.equal((await request(s.url, 'GET', `${CMS}/plain-c`)).status, 200);

  // a namespace holding over-deep objects, one of them with a finalizer the "controller" removes
  const ns = await request(s.url, 'DELETE', '/api/v1/namespaces/old-ns');
  assert.equal(ns.status, 200, ns.text.slice(0, 300));
  const held = '/api/v1/namespaces/old-ns/configmaps/deep-e';
  await until(
    async () => ((await request(s.url, 'GET', held)).json?.metadata?.deletionTimestamp ? true : undefined),
    'deep-e marked for deletion',
  );
  const release = await request(s.url, 'PATCH', held, [{ op: 'remove', path: '/metadata/finalizers' }], {
    'content-type': 'application/json-patch+json',
  });
  assert.equal(release.status, 200, release.text.slice(0, 300));
  await until(
    async () => ((await request(s.url, 'GET', '/api/v1/namespaces/old-ns')).status === 404 ? true : undefined),
    'namespace old-ns terminated',
    30_000,
  );
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/old-ns/configmaps/deep-d')).status, 404);
});

test('a JSON patch within the limit cannot nest its value under a deep path past it: 422 on field patch', async () => {
  const n = 600;
  const created = await request(
    s.url,
    'POST',
    REVS,
    `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"patched"},"revision":1,"data":${deepJson(n)}}`,
  );
  assert.equal(created.status, 201, created.text.slice(0, 300));
  const patch = JSON.stringify([
    { op: 'add', path: '/data' + '/f:a'.repeat(n) + '/x', value: JSON.parse(deepJson(n)) },
  ]);
  const r = await request(s.url, 'PATCH', `${REVS}/patched`, patch, { 'content-type': 'application/json-patch+json' });
  assertStatus(r, 422, 'Invalid');
  assert.equal(r.json.details.causes[0].field, 'patch');
  assert.match(r.json.message, /exceeded max depth of 1000/);
  assert.equal(
    (await request(s.url, 'GET', `${REVS}/patched`)).json.metadata.resourceVersion,
    created.json.metadata.resourceVersion,
    'nothing written',
  );
});
