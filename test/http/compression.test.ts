import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startServer, request, type TestServer } from '../helpers/server.js';

/** Raw GET without automatic decompression, so the Content-Encoding header is visible. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

async function fill(s: TestServer, ns: string): Promise<void> {
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const big = 'x'.repeat(2000);
  for (let i = 0; i < 100; i += 25) {
    await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        request(s.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
          metadata: { name: `c${i + j}` },
          data: { big },
        }),
      ),
    );
  }
}

let s: TestServer;
let off: TestServer;
before(async () => {
  [s, off] = await Promise.all([startServer(), startServer(['--feature-gates', 'APIResponseCompression=false'])]);
  await Promise.all([fill(s, 'gz'), fill(off, 'gz')]);
});
after(async () => {
  await Promise.all([s.stop(), off.stop()]);
  s.cleanup();
  off.cleanup();
});

test('large list with Accept-Encoding: gzip is gzipped and decodes to the same list', async () => {
  const r = await rawGet(`${s.url}/api/v1/namespaces/gz/configmaps`, { 'accept-encoding': 'gzip' });
  assert.equal(r.status, 200);
  assert.equal(r.encoding, 'gzip');
  const list = JSON.parse(gunzipSync(r.body).toString());
  assert.equal(list.items.length, 100);
});

test('small responses and clients without gzip are not compressed', async () => {
  const small = await rawGet(`${s.url}/api/v1/namespaces/gz/configmaps/c1`, { 'accept-encoding': 'gzip' });
  assert.equal(small.encoding, undefined);
  const plain = await rawGet(`${s.url}/api/v1/namespaces/gz/configmaps`, {});
  assert.equal(plain.encoding, undefined);
  assert.equal(JSON.parse(plain.body.toString()).items.length, 100);
});

test('APIResponseCompression=false disables compression', async () => {
  const r = await rawGet(`${off.url}/api/v1/namespaces/gz/configmaps`, { 'accept-encoding': 'gzip' });
  assert.equal(r.encoding, undefined);
});
