/**
 * ConfigMap and Secret keys are file names in volumes (issue 18, item 11): keys that are paths,
 * `.`/`..`-prefixed, empty, with control characters or longer than 253 characters are upstream's
 * 422 (validation.IsConfigMapKey), on create and update, through data, binaryData and stringData.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

const NS = '/api/v1/namespaces/default';
const KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
let s: TestServer;

before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const BAD: [string, string[]][] = [
  ['../../x', [KEY_MESSAGE, "must not start with '..'"]],
  ['a/b', [KEY_MESSAGE]],
  ['k\u0000', [KEY_MESSAGE]],
  ['', [KEY_MESSAGE]],
  ['.', ["must not be '.'"]],
  ['..', ["must not be '..'"]],
  ['..data', ["must not start with '..'"]],
  ['x'.repeat(254), ['must be no more than 253 characters']],
];

test('configmaps: bad keys in data and binaryData are 422 on create', async () => {
  for (const [i, [key, messages]] of BAD.entries()) {
    for (const field of ['data', 'binaryData']) {
      const value = field === 'data' ? 'v' : 'dg==';
      const r = await request(s.url, 'POST', `${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}` },
        [field]: { [key]: value },
      });
      assert.equal(r.status, 422, `${field} ${JSON.stringify(key)}: ${r.text}`);
      assert.deepEqual(
        r.json.details.causes,
        messages.map((m) => ({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(key)}: ${m}`,
          field: `${field}[${key}]`,
        })),
      );
    }
  }
  const dup = await request(s.url, 'POST', `${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'dup' },
    data: { k: 'v' },
    binaryData: { k: 'dg==' },
  });
  assert.equal(dup.status, 422, dup.text);
  assert.equal(
    dup.json.message,
    'ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData',
  );
});

test('secrets: bad keys in data and stringData are 422 (stringData is checked as data)', async () => {
  const r = await request(s.url, 'POST', `${NS}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's1' },
    data: { 'a/b': 'dg==' },
  });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.message, `Secret "s1" is invalid: data[a/b]: Invalid value: "a/b": ${KEY_MESSAGE}`);
  const viaString = await request(s.url, 'POST', `${NS}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's2' },
    stringData: { '../../etc/passwd': 'x' },
  });
  assert.equal(viaString.status, 422, viaString.text);
  assert.deepEqual(
    viaString.json.details.causes.map((c: any) => c.field),
    ['data[../../etc/passwd]', 'data[../../etc/passwd]'],
  );
});

test('good keys are stored; an update cannot add a bad one', async () => {
  const data = { 'key.name': 'a', KEY_NAME: 'b', 'key-name': 'c', '.hidden': 'd', ['k'.repeat(253)]: 'e' };
  const c = await request(s.url, 'POST', `${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'good' },
    data,
  });
  assert.equal(c.status, 201, c.text);
  const cm = c.json;
  cm.data['../x'] = 'y';
  const u = await request(s.url, 'PUT', `${NS}/configmaps/good`, cm);
  assert.equal(u.status, 422, u.text);
  const p = await request(
    s.url,
    'PATCH',
    `${NS}/configmaps/good`,
    { data: { 'a/b': 'y' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(p.status, 422, p.text);
  assert.equal(p.json.message, `ConfigMap "good" is invalid: data[a/b]: Invalid value: "a/b": ${KEY_MESSAGE}`);
});
