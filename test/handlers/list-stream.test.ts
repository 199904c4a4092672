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

const CMS = '/api/v1/namespaces/default/configmaps';
const N = 2600;
let s: TestServer;
const home = mkdtempSync(join(tmpdir(), 'plat-kubectl-'));
const { ok } = kubectlRunner(() => s.url, () => home);
before(async () => {
  s = await startServer();
  for (let i = 0; i < N; i += 200) {
    await Promise.all(Array.from({ length: Math.min(200, N - i) }, (_, j) =>
      request(s.url, 'POST', CMS, configMap(`cm-${String(i + j).padStart(5, '0')}`, { parity: (i + j) % 2 ? 'odd' : 'even' }))));
  }
});
after(async () => { await s?.stop(); s?.cleanup(); rmSync(home, { recursive: true, force: true }); });

/** The raw response: status, headers and body bytes (no decoding). */
function raw(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: s.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
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
  const viaCurl = execFileSync('curl', ['-s', '--compressed', `${s.url}/api/v1/configmaps`], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
  assert.ok(JSON.parse(viaCurl).items.length >= N);
  const out = await ok('get', 'configmaps', '-n', 'default', '--no-headers');
  assert.equal(out.trim().split('\n').length, N);
});

test('writes racing a streamed list do not appear in it; the next list has them', async () => {
  const listing = raw(CMS);
  const racing = Promise.all(Array.from({ length: 50 }, (_, i) => request(s.url, 'POST', CMS, configMap(`zz-race-${i}`))));
  const [r] = await Promise.all([listing, racing]);
  const list = JSON.parse(r.body.toString('utf8'));
  const rv = Number(list.metadata.resourceVersion);
  const raced = list.items.filter((i: any) => i.metadata.name.startsWith('zz-race-'));
  assert.ok(raced.every((i: any) => Number(i.metadata.resourceVersion) <= rv), 'only writes at or before the list version');
  const after = JSON.parse((await raw(CMS)).body.toString('utf8'));
  assert.equal(after.items.filter((i: any) => i.metadata.name.startsWith('zz-race-')).length, 50);
});

test('explicit limit and continue still page as the client asks', async () => {
  const page = await request(s.url, 'GET', `${CMS}?limit=500`);
  assert.equal(page.json.items.length, 500);
  assert.ok(page.json.metadata.continue);
});
