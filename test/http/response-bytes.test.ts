/**
 * Response bytes as upstream writes them (issue 19 item 6): Status fields in metav1.Status
 * struct order, compact JSON bodies end with the json.Encoder newline, pretty ones
 * (MarshalIndent) do not, curl/Wget/Mozilla user agents get pretty output unless `pretty`
 * says otherwise, and /version is always indented (WriteRawJSON).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
let s: TestServer;
before(async () => {
  s = await startServer();
  const r = await request(s.url, 'POST', CMS, configMap('bytes'));
  assert.equal(r.status, 201, r.text);
});
after(() => s.stop());

test('a Status is written in struct order with details before code, ending with a newline', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces/nope');
  assert.equal(
    r.text,
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \\"nope\\" not found",' +
      '"reason":"NotFound","details":{"name":"nope","kind":"namespaces"},"code":404}\n',
  );
});

test('compact object, list, table and discovery bodies end with exactly one newline', async () => {
  const paths = [`${CMS}/bytes`, CMS, '/api', '/api/v1', '/apis'];
  for (const p of paths) {
    const r = await request(s.url, 'GET', p);
    assert.equal(r.status, 200, p);
    assert.ok(r.text.endsWith('}\n') && !r.text.endsWith('\n\n'), `${p}: ${JSON.stringify(r.text.slice(-20))}`);
    assert.ok(!r.text.startsWith('{\n'), `${p} is not pretty`);
  }
  const table = await request(s.url, 'GET', CMS, undefined, {
    accept: 'application/json;as=Table;v=v1;g=meta.plat.io',
  });
  assert.equal(JSON.parse(table.text).kind, 'Table');
  assert.ok(table.text.endsWith(']}\n'), JSON.stringify(table.text.slice(-20)));
  const created = await request(s.url, 'POST', CMS, configMap('bytes2'));
  assert.ok(created.text.endsWith('}\n'));
  const deleted = await request(s.url, 'DELETE', `${CMS}/bytes2`);
  assert.equal(deleted.status, 200);
  assert.ok(deleted.text.endsWith('}\n'));
});

test('?pretty=true is indented with no trailing newline; pretty=false stays compact', async () => {
  const r = await request(s.url, 'GET', `${CMS}/bytes?pretty=true`);
  assert.ok(r.text.startsWith('{\n  "kind": "ConfigMap",'), r.text.slice(0, 40));
  assert.ok(r.text.endsWith('\n}'), JSON.stringify(r.text.slice(-10)));
  assert.equal(r.text, JSON.stringify(JSON.parse(r.text), null, 2));
  const err = await request(s.url, 'GET', '/api/v1/namespaces/nope?pretty=1');
  assert.ok(err.text.startsWith('{\n  "kind": "Status",') && err.text.endsWith('"code": 404\n}'), err.text);
  const off = await request(s.url, 'GET', `${CMS}/bytes?pretty=false`, undefined, { 'user-agent': 'curl/8.5.0' });
  assert.ok(!off.text.startsWith('{\n') && off.text.endsWith('}\n'));
});

test('curl, Wget and browser user agents get pretty output; other clients do not', async () => {
  for (const ua of ['curl/8.5.0', 'Wget/1.21.4', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0']) {
    const r = await request(s.url, 'GET', `${CMS}/bytes`, undefined, { 'user-agent': ua });
    assert.ok(r.text.startsWith('{\n  "kind": "ConfigMap"') && r.text.endsWith('\n}'), `${ua}: ${r.text.slice(0, 30)}`);
    const d = await request(s.url, 'GET', '/api', undefined, { 'user-agent': ua });
    assert.ok(d.text.startsWith('{\n  "kind": "APIVersions"'), `${ua} /api: ${d.text.slice(0, 30)}`);
  }
  const kubectl = await request(s.url, 'GET', `${CMS}/bytes`, undefined, {
    'user-agent': 'kubectl/v1.32.0 (linux/amd64)',
  });
  assert.ok(kubectl.text.startsWith('{"kind":"ConfigMap"'));
});

test('/version is indented for every client, without a trailing newline', async () => {
  for (const ua of ['kubectl/v1.32.0', 'curl/8.5.0']) {
    const r = await request(s.url, 'GET', '/version', undefined, { 'user-agent': ua });
    assert.equal(r.status, 200);
    assert.equal(r.text, JSON.stringify(r.json, null, 2));
    assert.ok(r.text.startsWith('{\n  "major": "1",'));
  }
});
