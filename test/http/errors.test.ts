/**
 * Hostile and malformed requests: bad bodies, wrong kinds, oversized bodies, unsupported
 * media types, hostile query strings and paths. Every failure is a Status body with the
 * right code and reason, nothing is written, and the server keeps serving throughout.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { parse as parseYaml } from 'yaml';
import { startServers, stopServers, request, configMap, type TestServer, type Reply } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';

const CMS = '/api/v1/namespaces/default/configmaps';

let s: TestServer;
let small: TestServer;
before(async () => {
  [s, small] = await startServers([], ['--max-request-body-bytes', '1024']);
});
after(() => stopServers([s, small]));

/** A request over node:http, which sends the path exactly as given (fetch normalizes `..`). */
function raw(
  port: number,
  method: string,
  path: string,
  body?: Buffer | string[],
  headers: Record<string, string> = {},
  agent?: http.Agent,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, ...(agent ? { agent } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, text, json });
      });
    });
    req.on('error', reject);
    if (Array.isArray(body))
      for (const part of body) req.write(part); // chunked transfer encoding
    else if (body) req.write(body);
    req.end();
  });
}

async function assertAlive(t: TestServer = s): Promise<void> {
  const r = await request(t.url, 'GET', '/api/v1/namespaces/default');
  assert.equal(r.status, 200, 'server still serves requests');
}

test('malformed JSON body is 400 BadRequest', async () => {
  const r = await request(s.url, 'POST', CMS, '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {');
  assertStatus(r, 400, 'BadRequest');
});

test('malformed YAML body is 400 BadRequest', async () => {
  const r = await request(s.url, 'POST', CMS, 'apiVersion: v1\nkind: [ConfigMap\nmetadata:\n  name: : y\n', {
    'content-type': 'application/yaml',
  });
  assertStatus(r, 400, 'BadRequest');
});

test('a YAML alias bomb is refused with 400, promptly', async () => {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    const cur = String.fromCharCode(97 + i);
    levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  const startedAt = Date.now();
  const r = await request(
    s.url,
    'POST',
    CMS,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n${levels.join('\n')}\n`,
    { 'content-type': 'application/yaml' },
  );
  assertStatus(r, 400, 'BadRequest');
  assert.ok(Date.now() - startedAt < 5000, 'rejected without expanding the aliases');
  assert.equal((await request(s.url, 'GET', `${CMS}/bomb`)).status, 404);
});

test('a body that is not an object (array, string, number, null) is 400', async () => {
  for (const body of ['[{"metadata":{"name":"arr"}}]', '"just a string"', '42', 'null']) {
    const r = await request(s.url, 'POST', CMS, body);
    assertStatus(r, 400, 'BadRequest');
  }
  const y = await request(s.url, 'POST', CMS, '- a\n- b\n', { 'content-type': 'application/yaml' });
  assertStatus(y, 400, 'BadRequest');
});

test('an empty body on create is 400', async () => {
  const r = await request(s.url, 'POST', CMS, '');
  assertStatus(r, 400, 'BadRequest');
});

test('wrong kind for the path is 400 and nothing is written', async () => {
  const r = await request(s.url, 'POST', CMS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'wrong-kind' },
    data: {},
  });
  assertStatus(r, 400, 'BadRequest');
  assert.match(r.json.message, /Secret/);
  assert.equal((await request(s.url, 'GET', `${CMS}/wrong-kind`)).status, 404);
});

test('wrong apiVersion for the path is 400', async () => {
  const r = await request(s.url, 'POST', CMS, {
    apiVersion: 'apps/v1',
    kind: 'ConfigMap',
    metadata: { name: 'wrong-av' },
  });
  assertStatus(r, 400, 'BadRequest');
  assert.match(r.json.message, /apps\/v1/);
  const d = await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
  });
  assertStatus(d, 400, 'BadRequest');
});

test('a body over the default 3 MiB limit is 413 and nothing is written', async () => {
  const big = JSON.stringify(configMap('too-big', {}, { k: 'x'.repeat(3 * 1024 * 1024 + 16) }));
  const r = await request(s.url, 'POST', CMS, big);
  assertStatus(r, 413, 'RequestEntityTooLarge');
  assert.equal((await request(s.url, 'GET', `${CMS}/too-big`)).status, 404);
  // without a Content-Length: chunked transfer encoding, the limit applies while reading
  const part = 'x'.repeat(512 * 1024);
  const chunks = ['{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"too-big-chunked"},"data":{"k":"'];
  for (let i = 0; i < 7; i++) chunks.push(part);
  chunks.push('"}}');
  const c = await raw(s.port, 'POST', CMS, chunks, { 'content-type': 'application/json' });
  assertStatus(c, 413, 'RequestEntityTooLarge');
  assert.equal((await request(s.url, 'GET', `${CMS}/too-big-chunked`)).status, 404);
  await assertAlive();
});

test('--max-request-body-bytes 1024: a 2 KiB body is 413, a small one is created', async () => {
  const r = await request(small.url, 'POST', CMS, configMap('small-limit', {}, { k: 'y'.repeat(2048) }));
  assertStatus(r, 413, 'RequestEntityTooLarge');
  assert.equal((await request(small.url, 'GET', `${CMS}/small-limit`)).status, 404);
  const c = await raw(
    small.port,
    'POST',
    CMS,
    [JSON.stringify(configMap('small-chunked', {}, { k: 'z'.repeat(2048) }))],
    { 'content-type': 'application/json' },
  );
  assertStatus(c, 413, 'RequestEntityTooLarge');
  assert.equal((await request(small.url, 'GET', `${CMS}/small-chunked`)).status, 404);
  const ok = await request(small.url, 'POST', CMS, configMap('small-ok'));
  assert.equal(ok.status, 201);
  const u = await request(small.url, 'PUT', `${CMS}/small-ok`, { ...ok.json, data: { k: 'w'.repeat(2048) } });
  assertStatus(u, 413, 'RequestEntityTooLarge');
  const g = await request(small.url, 'GET', `${CMS}/small-ok`);
  assert.deepEqual(g.json.data, { k: 'v' }, 'the rejected update was not applied');
  await assertAlive(small);
});

test('unknown Content-Type is 415; a charset parameter is fine', async () => {
  const r = await request(s.url, 'POST', CMS, '<configMap/>', { 'content-type': 'application/xml' });
  assertStatus(r, 415, 'UnsupportedMediaType');
  const t = await request(s.url, 'POST', CMS, JSON.stringify(configMap('plain-text')), {
    'content-type': 'text/plain',
  });
  assertStatus(t, 415, 'UnsupportedMediaType');
  assert.equal((await request(s.url, 'GET', `${CMS}/plain-text`)).status, 404);
  const ok = await request(s.url, 'POST', CMS, JSON.stringify(configMap('charset-ok')), {
    'content-type': 'application/json; charset=utf-8',
  });
  assert.equal(ok.status, 201);
});

test('an Accept nothing serves is 406 NotAcceptable', async () => {
  const l = await request(s.url, 'GET', CMS, undefined, { accept: 'application/xml' });
  assertStatus(l, 406, 'NotAcceptable');
  const g = await request(s.url, 'GET', '/api/v1/namespaces/default', undefined, { accept: 'text/html, image/png' });
  assertStatus(g, 406, 'NotAcceptable');
  const fallback = await request(s.url, 'GET', '/api/v1/namespaces/default', undefined, {
    accept: 'application/xml, application/json',
  });
  assert.equal(fallback.status, 200);
});

test('YAML request body and YAML response', async () => {
  const body =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n  labels:\n    fmt: yaml\ndata:\n  key: "value: with colon"\n';
  const r = await request(s.url, 'POST', CMS, body, { 'content-type': 'application/yaml', accept: 'application/yaml' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.headers.get('content-type'), 'application/yaml');
  const obj = parseYaml(r.text);
  assert.equal(obj.kind, 'ConfigMap');
  assert.equal(obj.metadata.name, 'from-yaml');
  assert.equal(obj.data.key, 'value: with colon');
  assert.equal(typeof obj.metadata.resourceVersion, 'string');
  const g = await request(s.url, 'GET', `${CMS}/from-yaml`, undefined, { accept: 'application/yaml' });
  assert.equal(g.status, 200);
  assert.equal(parseYaml(g.text).metadata.uid, obj.metadata.uid);
  const asJson = await request(s.url, 'GET', `${CMS}/from-yaml`);
  assert.equal(asJson.json.data.key, 'value: with colon');
});

test('Accept is ordered by q-value, then by specificity', async () => {
  const path = '/api/v1/namespaces/default';
  const yamlFirst = await request(s.url, 'GET', path, undefined, {
    accept: 'application/json;q=0.5, application/yaml',
  });
  assert.equal(yamlFirst.status, 200);
  assert.equal(yamlFirst.headers.get('content-type'), 'application/yaml');
  const jsonFirst = await request(s.url, 'GET', path, undefined, {
    accept: 'application/yaml;q=0.1, application/json;q=0.9',
  });
  assert.equal(jsonFirst.headers.get('content-type'), 'application/json');
  const concrete = await request(s.url, 'GET', path, undefined, { accept: '*/*, application/yaml' });
  assert.equal(concrete.headers.get('content-type'), 'application/yaml');
  const wildcard = await request(s.url, 'GET', path, undefined, { accept: '*/*' });
  assert.equal(wildcard.headers.get('content-type'), 'application/json');
});

test('?pretty=true indents JSON', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces/default?pretty=true');
  assert.equal(r.status, 200);
  assert.match(r.text, /^\{\n {2}"kind": "Namespace",\n/);
  const plain = await request(s.url, 'GET', '/api/v1/namespaces/default');
  assert.ok(plain.text.endsWith('}\n') && !plain.text.slice(0, -1).includes('\n'));
  assert.deepEqual(r.json, plain.json);
  const e = await request(s.url, 'GET', `${CMS}/does-not-exist?pretty=true`);
  assertStatus(e, 404, 'NotFound');
});

test('hostile query strings are 400 Status, never a crash', async () => {
  assertStatus(await request(s.url, 'GET', `${CMS}?limit=abc`), 400, 'BadRequest');
  const label = await request(s.url, 'GET', `${CMS}?labelSelector=a%20in%20(b`);
  assertStatus(label, 400, 'BadRequest');
  assert.equal(label.json.message, "unable to parse requirement: found '', expected: ',' or ')'");
  const field = await request(s.url, 'GET', `${CMS}?fieldSelector=spec.bogus=1`);
  assertStatus(field, 400, 'BadRequest');
  assert.equal(field.json.message, 'field label not supported: spec.bogus');
  assertStatus(await request(s.url, 'GET', `${CMS}?labelSelector=%zz`), 400, 'BadRequest');
  assertStatus(await request(s.url, 'GET', `${CMS}?limit=%zz`), 400, 'BadRequest');
  assertStatus(await request(s.url, 'GET', `${CMS}?resourceVersion=%zz`), 400, 'BadRequest');
  // an unknown parameter with a garbage name is ignored
  assert.equal((await request(s.url, 'GET', `${CMS}?%zz=%zz`)).status, 200);
  await assertAlive();
});

test('a 100 KB labelSelector never crashes the server; fresh connections answer it with a Status', async () => {
  // Known limit of the pinned uWebSockets.js build: a request head larger than 4 KiB that
  // arrives across several socket reads (a warm keep-alive connection) is dropped without a
  // response (no 431). Documented in docs/architecture.md; the server itself stays healthy.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const warm = await raw(s.port, 'GET', '/version', undefined, {}, agent);
    assert.equal(warm.status, 200);
    const big = await raw(s.port, 'GET', `${CMS}?labelSelector=a%3D${'b'.repeat(100_000)}`, undefined, {}, agent).catch(
      () => undefined,
    );
    assert.ok(!big || [400, 414, 431].includes(big.status), `status ${big?.status}`);
  } finally {
    agent.destroy();
  }
  const fresh = await request(s.url, 'GET', `${CMS}?labelSelector=a%3D${'b'.repeat(5_000)}`).catch(() => undefined);
  assert.ok(!fresh || [400, 414, 431].includes(fresh.status), `status ${fresh?.status}`);
  if (fresh?.status === 400) assert.equal(fresh.json.reason, 'BadRequest');
  const many = await request(
    s.url,
    'GET',
    `${CMS}?labelSelector=${Array.from({ length: 5000 }, (_, i) => `k${i}%3Dv`).join(',')}`,
  ).catch(() => undefined);
  assert.ok(!many || [200, 400, 414, 431].includes(many.status), `status ${many?.status}`);
  await assertAlive();
});

test('repeated query parameters: the first value wins', async () => {
  for (const [n, app] of [
    ['rep-a', 'a'],
    ['rep-b', 'b'],
    ['rep-c', 'a'],
  ] as const) {
    assert.equal((await request(s.url, 'POST', CMS, configMap(n, { rep: app }))).status, 201);
  }
  const sel = await request(s.url, 'GET', `${CMS}?labelSelector=rep%3Da&labelSelector=rep%3Db`);
  assert.equal(sel.status, 200);
  assert.deepEqual(
    sel.json.items.map((i: any) => i.metadata.name),
    ['rep-a', 'rep-c'],
  );
  const lim = await request(s.url, 'GET', `${CMS}?labelSelector=rep&limit=1&limit=3`);
  assert.equal(lim.status, 200);
  assert.equal(lim.json.items.length, 1);
  assert.ok(lim.json.metadata.continue);
});

test('path traversal never reaches another resource', async () => {
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'trav' }, data: {} }))
      .status,
    201,
  );
  for (const p of [
    `${CMS}/../secrets`,
    `${CMS}/../secrets/trav`,
    `${CMS}/%2e%2e/secrets/trav`,
    `${CMS}/..%2fsecrets%2ftrav`,
    '/api/v1/namespaces/default/configmaps/trav/../../secrets/trav',
    '/api/v1/namespaces/../namespaces/default/secrets/trav',
  ]) {
    const r = await raw(s.port, 'GET', p);
    assert.ok(r.status < 200 || r.status >= 300, `${p} -> ${r.status} ${r.text.slice(0, 200)}`);
    assert.ok(r.status < 500, `${p} -> ${r.status}`);
    assert.ok(!r.text.includes('"kind":"Secret'), p);
  }
  const dots = await raw(s.port, 'POST', `${CMS}`, Buffer.from(JSON.stringify(configMap('..'))), {
    'content-type': 'application/json',
  });
  assert.ok(dots.status === 400 || dots.status === 422, `create named .. -> ${dots.status}`);
  await assertAlive();
});

test('a 254-character name is 422 Invalid on metadata.name; 253 is fine', async () => {
  const r = await request(s.url, 'POST', CMS, configMap('a'.repeat(254)));
  assertStatus(r, 422, 'Invalid');
  assert.equal(r.json.details.kind, 'ConfigMap');
  assert.ok(r.json.details.causes.some((c: any) => c.field === 'metadata.name'));
  const ok = await request(s.url, 'POST', CMS, configMap('b'.repeat(253)));
  assert.equal(ok.status, 201);
});

test('after all of that the server is still ready', async () => {
  for (const t of [s, small]) {
    const r = await request(t.url, 'GET', '/readyz');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'ok');
  }
});

test('a malformed timeout is 400 before anything is written, and never takes the server down', async () => {
  const bad = await request(s.url, 'POST', `${CMS}?timeout=%24patch`, configMap('timeout-bad'));
  assert.equal(bad.status, 400);
  assert.equal(bad.json.reason, 'BadRequest');
  assert.equal((await request(s.url, 'GET', `${CMS}/timeout-bad`)).status, 404);
  const get = await request(s.url, 'GET', '/apis/rbac.authorization.plat.io/v1/namespaces/default/roles?timeout=zz');
  assert.equal(get.status, 400);
  await assertAlive();
});

test('bytes fields must be base64 and list elements cannot be null (400, nothing written)', async () => {
  const sec = await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'b64-bad' },
    data: { k: 'not base64!' },
  });
  assert.equal(sec.status, 400);
  assert.equal(sec.json.reason, 'BadRequest');
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/secrets/b64-bad')).status, 404);
  const ok = await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'b64-ok' },
    data: { k: 'aGVsbG8=' },
  });
  assert.equal(ok.status, 201);
  const lr = await request(s.url, 'POST', '/api/v1/namespaces/default/limitranges', {
    metadata: { name: 'lr-null' },
    spec: { limits: [null] },
  });
  assert.equal(lr.status, 400);
  await assertAlive();
});

test('fuzz findings stay fixed: object-valued kind, odd field names in warnings, over-long path-segment names', async () => {
  const kind = await request(s.url, 'POST', CMS, {
    apiVersion: 'v1',
    kind: { toString: 1 },
    metadata: { name: 'k-obj' },
  });
  assert.equal(kind.status, 400);
  const warn = await request(s.url, 'POST', CMS, { metadata: { name: 'odd-field' }, ['x\u007fy\u00e9']: 1 });
  assert.equal(warn.status, 201);
  assert.match(warn.headers.get('warning') ?? '', /unknown field/);
  const long = await request(s.url, 'POST', '/apis/rbac.authorization.plat.io/v1/namespaces/default/roles', {
    metadata: { name: 'r'.repeat(3000) },
    rules: [],
  });
  assert.equal(long.status, 422);
  const fine = await request(s.url, 'POST', '/apis/rbac.authorization.plat.io/v1/namespaces/default/roles', {
    metadata: { name: 'short-role' },
    rules: [],
  });
  assert.equal(fine.status, 201);
  await assertAlive();
});

test('time fields must be RFC 3339 (a stored bad time would break every Protobuf read of its type)', async () => {
  const bad = await request(s.url, 'POST', '/apis/coordination.plat.io/v1/namespaces/default/leases', {
    metadata: { name: 'bad-time' },
    spec: { renewTime: 'yesterday' },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.reason, 'BadRequest');
  const ok = await request(s.url, 'POST', '/apis/coordination.plat.io/v1/namespaces/default/leases', {
    metadata: { name: 'good-time' },
    spec: { renewTime: '2026-11-23T00:00:00.123456Z' },
  });
  assert.equal(ok.status, 201);
});

test('names that no URL could reach (lone surrogates, NUL) are 422', async () => {
  const r = await request(s.url, 'POST', '/apis/rbac.authorization.plat.io/v1/namespaces/default/roles', {
    metadata: { name: 'a\ud800b' },
    rules: [],
  });
  assert.equal(r.status, 422);
  assert.equal(r.json.details.causes[0].field, 'metadata.name');
});

test('virtual review kinds check field types too (their reply echoes spec)', async () => {
  const r = await request(
    s.url,
    'POST',
    '/apis/authentication.plat.io/v1/tokenreviews',
    { kind: 'TokenReview', apiVersion: 'authentication.plat.io/v1', spec: { token: 't', audiences: [{ name: null }] } },
    { accept: 'application/vnd.platform.protobuf' },
  );
  assert.equal(r.status, 400);
});
