/**
 * Issue 12 item 3, limits: nesting depth (JSON, YAML block and flow, Protobuf raw fields),
 * the per-object storage limit, --request-timeout, and HEAD on a watch. Each refusal is a
 * Status, nothing is written, and the connection keeps its framing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServers, stopServers, request, configMap, type TestServer } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const REVS = '/apis/apps/v1/namespaces/default/controllerrevisions';

let s: TestServer;
let slow: TestServer;
before(async () => {
  [s, slow] = await startServers([], ['--request-timeout', '200ms']);
});
after(() => stopServers([s, slow]));

const nestedJson = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const revision = (name: string, data: string): string =>
  `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"${name}"},"revision":1,"data":${data}}`;

test('JSON nested past 1000 levels is 400 and nothing is written; 900 levels are stored', async () => {
  const deep = await request(s.url, 'POST', REVS, revision('deep', nestedJson(1001)));
  assertStatus(deep, 400, 'BadRequest');
  assert.match(deep.json.message, /exceeded max depth of 1000/);
  assert.equal((await request(s.url, 'GET', `${REVS}/deep`)).status, 404);
  const ok = await request(s.url, 'POST', REVS, revision('fine', nestedJson(900)));
  assert.equal(ok.status, 201, ok.text.slice(0, 200));
  // readable back in YAML: the limit keeps every stored object encodable
  const y = await request(s.url, 'GET', `${REVS}/fine`, undefined, { accept: 'application/yaml' });
  assert.equal(y.status, 200);
});

test('brackets inside strings do not count towards the depth', async () => {
  const r = await request(s.url, 'POST', CMS, configMap('brackets', {}, { k: '['.repeat(5000) + '{'.repeat(5000) }));
  assert.equal(r.status, 201, r.text.slice(0, 200));
});

test('YAML nested past the limit (block and flow style) is 400, promptly', async () => {
  const head = 'apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: yaml-deep\nrevision: 1\ndata:\n';
  let block = '';
  for (let i = 0; i < 1100; i++) block += ' '.repeat(i + 1) + 'a:\n';
  const b = await request(s.url, 'POST', REVS, head + block + ' '.repeat(1101) + 'x: 1\n', {
    'content-type': 'application/yaml',
  });
  assertStatus(b, 400, 'BadRequest');
  const flow = await request(s.url, 'POST', REVS, head + '  a: ' + '['.repeat(5000) + ']'.repeat(5000) + '\n', {
    'content-type': 'application/yaml',
  });
  assertStatus(flow, 400, 'BadRequest');
  // a ConfigMap of this test's own to patch (it runs alone too)
  assert.equal((await request(s.url, 'POST', CMS, configMap('deep-patch-target'))).status, 201);
  const patch = await request(s.url, 'PATCH', `${CMS}/deep-patch-target`, nestedJson(2000), {
    'content-type': 'application/merge-patch+json',
  });
  assertStatus(patch, 400, 'BadRequest');
  assert.equal((await request(s.url, 'GET', `${REVS}/yaml-deep`)).status, 404);
});

test('an object over 1.5 MiB stored is 413 on create and update, and nothing is written', async () => {
  const big = 'x'.repeat(1536 * 1024);
  const c = await request(s.url, 'POST', CMS, configMap('huge', {}, { k: big }));
  assertStatus(c, 413, 'RequestEntityTooLarge');
  assert.equal((await request(s.url, 'GET', `${CMS}/huge`)).status, 404);
  const small = await request(s.url, 'POST', CMS, configMap('grows', {}, { k: 'x'.repeat(1024 * 1024) }));
  assert.equal(small.status, 201);
  const grow = await request(
    s.url,
    'PATCH',
    `${CMS}/grows`,
    { data: { k2: 'y'.repeat(600 * 1024) } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assertStatus(grow, 413, 'RequestEntityTooLarge');
  const after = await request(s.url, 'GET', `${CMS}/grows`);
  assert.equal(after.json.metadata.resourceVersion, small.json.metadata.resourceVersion, 'the update was not applied');
  assert.equal(after.json.data.k2, undefined);
});

test('--request-timeout bounds a request that waits (a future resourceVersion): 504 Timeout', async () => {
  const list = await request(slow.url, 'GET', CMS);
  const future = Number(list.json.metadata.resourceVersion) + 1000;
  // nothing writes: the wait for the version ends only by a timeout; the message names which one
  // (the resourceVersion wait's own would be "Too large resource version")
  const r = await request(slow.url, 'GET', `${CMS}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`);
  assertStatus(r, 504, 'Timeout');
  assert.match(r.json.message, /request did not complete within requested timeout/);
  assert.equal(r.json.details?.causes, undefined, 'not the ResourceVersionTooLarge answer');
  assert.equal((await request(slow.url, 'GET', CMS)).status, 200);
});

test('HEAD on a watch answers the headers only; the kept-alive connection keeps working', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const one = (method: string, path: string) =>
      new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: s.port, method, path, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode!, body, socket: req.socket }));
        });
        req.on('error', reject);
        req.end();
      });
    const head = await one('HEAD', `${CMS}?watch=1&timeoutSeconds=30`);
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    const next = await one('GET', '/readyz');
    assert.equal(next.status, 200);
    assert.equal(next.body, 'ok');
    assert.equal(next.socket, head.socket, 'the same connection served both');
  } finally {
    agent.destroy();
  }
});

test('fuzz findings: a recursive YAML alias is 400; metadata.namespace on a cluster-scoped apply is dropped, not stored', async () => {
  const r = await request(
    s.url,
    'POST',
    REVS,
    'apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: loop\nrevision: 1\ndata: &x\n  self: *x\n',
    { 'content-type': 'application/yaml' },
  );
  assertStatus(r, 400, 'BadRequest');
  const apply = await request(
    s.url,
    'PATCH',
    '/api/v1/nodes/n-ns?fieldManager=t',
    JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n-ns', namespace: 'h'.repeat(3000) } }),
    { 'content-type': 'application/apply-patch+yaml' },
  );
  assert.equal(apply.status, 201, apply.text.slice(0, 300));
  assert.equal(apply.json.metadata.namespace, undefined);
});

test('fuzz finding: delete options of the wrong JSON type are a 400 decoding error, not a 500', async () => {
  await request(s.url, 'POST', CMS, configMap('del-typed'));
  for (const body of [
    { propagationPolicy: { a: [1] } },
    { orphanDependents: 'yes' },
    { gracePeriodSeconds: '30' },
    { preconditions: [1] },
    { dryRun: 'All' },
    { preconditions: { resourceVersion: [{ 0: '-a' }] } },
    { preconditions: { uid: 7 } },
    { dryRun: [{ a: 1 }] },
  ]) {
    for (const path of [`${CMS}/del-typed`, CMS]) {
      const r = await request(s.url, 'DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', ...body });
      assertStatus(r, 400, 'BadRequest');
      assert.match(r.json.message, /json: cannot unmarshal/);
    }
  }
  assert.equal((await request(s.url, 'GET', `${CMS}/del-typed`)).status, 200, 'nothing deleted');
});
