/**
 * The listener's handling of a request left open or answered inside its uWS handler. A HEAD
 * reply written during the handler (endWithoutBody: non-resource paths, the cached GET's
 * HEAD) is not "answered" for uWS, which aborts the whole process when such a handler returns
 * without an abort handler: every HEAD gets its abort handler before anything is written. The
 * fuzz found it (seed 1219950693: HEAD of a discovery path killed the server).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { NO_QUERY } from '../../src/server/listener.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('HEAD of paths answered in the handler: the headers of the GET, no body, the server stays up', async () => {
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'h' } })).status,
    201,
  );
  for (const path of [
    '/api',
    '/apis',
    '/api/v1',
    '/version',
    '/healthz',
    '/nope',
    '/api/v1/namespaces/default/configmaps/h',
  ]) {
    const get = await fetch(s.url + path);
    const head = await fetch(s.url + path, { method: 'HEAD' });
    assert.equal(head.status, get.status, path);
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), path);
    assert.equal((await head.arrayBuffer()).byteLength, 0, `${path}: no body`);
    await get.arrayBuffer();
  }
  assert.equal(s.proc.exitCode, null, 'the server is still running');
  assert.equal((await request(s.url, 'GET', '/healthz')).status, 200);
});

test('requests without a query share one empty query that refuses changes', async () => {
  assert.equal(NO_QUERY.size, 0);
  assert.equal(NO_QUERY.get('timeout'), null);
  assert.deepEqual(NO_QUERY.getAll('dryRun'), []);
  assert.throws(() => NO_QUERY.set('dryRun', 'All'));
  assert.throws(() => NO_QUERY.append('dryRun', 'All'));
  assert.throws(() => NO_QUERY.delete('dryRun'));
  assert.throws(() => NO_QUERY.sort());
  assert.equal(NO_QUERY.toString(), '');
  // a query still reaches its request: a dry-run create after creates without one is not stored
  const cm = (name: string, q = '') =>
    request(s.url, 'POST', `/api/v1/namespaces/default/configmaps${q}`, { metadata: { name } });
  assert.equal((await cm('q-plain')).status, 201);
  assert.equal((await cm('q-dry', '?dryRun=All')).status, 201);
  assert.equal((await cm('q-plain-2')).status, 201);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/q-dry')).status, 404);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/q-plain-2')).status, 200);
});
