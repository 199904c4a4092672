/**
 * Lists at a past snapshot need the history from that snapshot on: once a later change has aged
 * out of the history window (--watch-history-window 1s), a continue token of the older snapshot
 * and resourceVersionMatch=Exact at it are 410 Expired with upstream's etcd3 messages.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';
import { until } from '../helpers/poll.js';

const NS = 'list-history';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
let s: TestServer;

before(async () => {
  s = await startServer(['--watch-history-window', '1s']);
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  for (const n of ['a', 'b', 'c']) assert.equal((await request(s.url, 'POST', CMS, configMap(n))).status, 201);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('a continue token and an Exact list older than the history window are 410 Expired; a new list works', async () => {
  const first = await request(s.url, 'GET', `${CMS}?limit=1`);
  assert.equal(first.status, 200, first.text);
  const rv = first.json.metadata.resourceVersion;
  const token = encodeURIComponent(first.json.metadata.continue);
  // nothing changed after the snapshot: however long ago it was taken, it is still served
  const resumed = await request(s.url, 'GET', `${CMS}?limit=1&continue=${token}`);
  assert.equal(resumed.status, 200, resumed.text);
  assert.deepEqual(
    resumed.json.items.map((i: any) => i.metadata.name),
    ['b'],
  );
  assert.equal(resumed.json.metadata.resourceVersion, rv);
  const exact = await request(s.url, 'GET', `${CMS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
  assert.equal(exact.status, 200, exact.text);
  assert.deepEqual(
    exact.json.items.map((i: any) => i.metadata.name),
    ['a', 'b', 'c'],
  );

  // a change after the snapshot; once it leaves the window the snapshot cannot be rebuilt
  assert.equal((await request(s.url, 'POST', CMS, configMap('d'))).status, 201);
  const expired = await until(
    async () => {
      const r = await request(s.url, 'GET', `${CMS}?limit=1&continue=${token}`);
      if (r.status === 200) return undefined;
      return r;
    },
    'the continue token to expire with the history',
    20_000,
  );
  assertStatus(expired, 410, 'Expired');
  assert.equal(
    expired.json.message,
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
  );
  const old = await request(s.url, 'GET', `${CMS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
  assertStatus(old, 410, 'Expired');
  assert.equal(old.json.message, 'The resourceVersion for the provided list is too old.');
  const fresh = await request(s.url, 'GET', `${CMS}?limit=10`);
  assert.equal(fresh.status, 200, fresh.text);
  assert.deepEqual(
    fresh.json.items.map((i: any) => i.metadata.name),
    ['a', 'b', 'c', 'd'],
  );
});
