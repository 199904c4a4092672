/**
 * Whole-collection LISTs larger than one page stream in pages (src/handlers/list-stream.ts):
 * the body is one complete, valid list at one resourceVersion, with selectors, gzip (one gzip
 * stream that curl and Go read), and kubectl; writes racing the stream do not show in it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import http from 'node:http';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlRunner } from '../helpers/kubectl.js';
import { STREAM_PAGE } from '../../src/handlers/list-stream.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';

const codec = new ProtobufCodec();

const CMS = '/api/v1/namespaces/default/configmaps';
const N = 2600;
let s: TestServer;
const home = mkdtempSync(join(tmpdir(), 'plat-kubectl-'));
const { ok } = kubectlRunner(
  () => s.url,
  () => home,
);
before(async () => {
  s = await startServer();
  for (let i = 0; i < N; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, N - i) }, (_, j) =>
        request(
          s.url,
          'POST',
          CMS,
          configMap(`cm-${String(i + j).padStart(5, '0')}`, { parity: (i + j) % 2 ? 'odd' : 'even' }),
        ),
      ),
    );
  }
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  rmSync(home, { recursive: true, force: true });
});

/** The raw response: status, headers and body bytes (no decoding). */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: s.port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

test('a list of several pages streams as one complete list at one resourceVersion', async () => {
  const r = await raw(CMS);
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked', 'streamed, not one body');
  const list = JSON.parse(r.body.toString('utf8'));
  assert.equal(list.kind, 'ConfigMapList');
  assert.equal(list.apiVersion, 'v1');
  assert.deepEqual(Object.keys(list.metadata), ['resourceVersion']);
  const names = list.items.map((i: any) => i.metadata.name);
  assert.equal(names.length, N);
  assert.deepEqual(names, [...names].sort(), 'in key order');
  assert.equal(new Set(names).size, N, 'no item twice');
  assert.ok(list.items.every((i: any) => Number(i.metadata.resourceVersion) <= Number(list.metadata.resourceVersion)));
});

test('Protobuf: a list of several pages streams, byte for byte the one-body list at its resourceVersion', async () => {
  const accept = { accept: 'application/vnd.platform.protobuf' };
  const streamed = await raw(CMS, accept);
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers['content-type'], 'application/vnd.platform.protobuf');
  assert.equal(streamed.headers['transfer-encoding'], 'chunked', 'streamed, not one body');
  const list: any = codec.decodeObject(streamed.body);
  assert.equal(list.kind, 'ConfigMapList');
  const names = list.items.map((i: any) => i.metadata.name);
  assert.equal(names.length, N);
  assert.deepEqual(names, [...names].sort(), 'in key order');
  // the same snapshot asked for as one page (limit above the count): the same bytes
  const rv = list.metadata.resourceVersion;
  const one = await raw(`${CMS}?limit=${N + 1}&resourceVersion=${rv}&resourceVersionMatch=Exact`, accept);
  assert.equal(one.headers['content-length'], String(one.body.length), 'one body');
  assert.ok(streamed.body.equals(one.body), 'streamed pages + envelope = the one-body list');
  const odd: any = codec.decodeObject((await raw(`${CMS}?labelSelector=parity%3Dodd`, accept)).body);
  assert.equal(odd.items.length, N / 2, 'selectors size the envelope for the matching items only');
});

test('selectors apply across pages; a small result is one body', async () => {
  const odd = JSON.parse((await raw(`${CMS}?labelSelector=parity%3Dodd`)).body.toString('utf8'));
  assert.equal(odd.items.length, N / 2);
  assert.ok(odd.items.every((i: any) => i.metadata.labels.parity === 'odd'));
  const one = await raw(`${CMS}?fieldSelector=metadata.name%3Dcm-01234`);
  assert.equal(one.headers['content-length'], String(one.body.length), 'one page: a plain body');
  assert.equal(JSON.parse(one.body.toString('utf8')).items[0].metadata.name, 'cm-01234');
});

test('gzip: one gzip stream (node, curl) and kubectl reads it', async () => {
  const r = await raw('/api/v1/configmaps', { 'accept-encoding': 'gzip' });
  assert.equal(r.headers['content-encoding'], 'gzip');
  assert.equal(JSON.parse(gunzipSync(r.body).toString('utf8')).items.length >= N, true);
  const viaCurl = execFileSync('curl', ['-s', '--compressed', `${s.url}/api/v1/configmaps`], {
    maxBuffer: 64 * 1024 * 1024,
  }).toString('utf8');
  assert.ok(JSON.parse(viaCurl).items.length >= N);
  const out = await ok('get', 'configmaps', '-n', 'default', '--no-headers');
  assert.equal(out.trim().split('\n').length, N);
});

/**
 * Reads a streamed list; on its first bytes (the list's snapshot is taken) pauses the response
 * and runs `during` to its end, then reads the rest. Returns the parsed list and what `during` gave.
 */
function listWhile<T>(path: string, during: () => Promise<T>): Promise<{ list: any; during: T }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: s.port, path }, (res) => {
        const chunks: Buffer[] = [];
        let running: Promise<T> | undefined;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (running) return;
          res.pause();
          running = during();
          running.then(() => res.resume(), reject);
        });
        res.on('end', () =>
          running!.then(
            (d) => resolve({ list: JSON.parse(Buffer.concat(chunks).toString('utf8')), during: d }),
            reject,
          ),
        );
      })
      .on('error', reject);
  });
}

test('writes made while a streamed list is read do not appear in it (new, changed, deleted); the next list has them', async () => {
  // 1,003 objects of 6 KiB: the first page (6 MB) outgrows the loopback socket buffers while the
  // client is paused, so the server must wait before it reads the next page: after the writes
  const ns = 'list-race';
  const count = STREAM_PAGE + 3;
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const big = 'x'.repeat(6 * 1024);
  for (let i = 0; i < count; i += 100) {
    const rs = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, j) =>
        request(s.url, 'POST', path, configMap(`cm-${String(i + j).padStart(5, '0')}`, {}, { k: 'v', big })),
      ),
    );
    for (const r of rs) assert.equal(r.status, 201, r.text);
  }
  const last = `cm-${String(count - 1).padStart(5, '0')}`;
  const gone = `cm-${String(count - 2).padStart(5, '0')}`;
  const { list, during } = await listWhile(path, async () => {
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, i) => request(s.url, 'POST', path, configMap(`zz-race-${i}`))),
    );
    const changed = await request(
      s.url,
      'PATCH',
      `${path}/${last}`,
      { data: { k: 'changed' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    const deleted = await request(s.url, 'DELETE', `${path}/${gone}`);
    for (const r of [...created, changed]) assert.ok(r.status === 201 || r.status === 200, r.text);
    assert.equal(deleted.status, 200, deleted.text);
    return [...created, changed].map((r) => Number(r.json.metadata.resourceVersion));
  });
  const rv = Number(list.metadata.resourceVersion);
  // every write of `during` committed after the snapshot the stream had begun to send
  assert.equal(during.length, 51);
  for (const writeRV of during) assert.ok(writeRV > rv, `write at ${writeRV} after the list at ${rv}`);
  const names = list.items.map((i: any) => i.metadata.name);
  assert.equal(names.filter((n: string) => n.startsWith('zz-race-')).length, 0, 'no object created after the snapshot');
  assert.equal(names.length, count, 'every object of the snapshot, the deleted one too');
  assert.equal(list.items.find((i: any) => i.metadata.name === last).data.k, 'v', 'the changed object as it was');
  assert.ok(list.items.every((i: any) => Number(i.metadata.resourceVersion) <= rv));
  const after = JSON.parse((await raw(path)).body.toString('utf8'));
  const afterNames = after.items.map((i: any) => i.metadata.name);
  assert.equal(afterNames.filter((n: string) => n.startsWith('zz-race-')).length, 50);
  assert.ok(!afterNames.includes(gone));
  assert.equal(after.items.find((i: any) => i.metadata.name === last).data.k, 'changed');
});

test('explicit limit and continue still page as the client asks', async () => {
  const page = await request(s.url, 'GET', `${CMS}?limit=500`);
  assert.equal(page.json.items.length, 500);
  assert.ok(page.json.metadata.continue);
});
