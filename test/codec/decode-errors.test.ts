/**
 * Bodies that do not decode are answered in upstream's words (issue 19 item 15): the JSON
 * serializer's `couldn't get version/kind; json parse error: <Go json error>` wrapped by
 * transformDecodeError with the expected kind and a summary of the body, Go's syntax errors
 * for patches, and the unstructured converter's `cannot restore map from string` for a
 * strategic merge patch of the wrong shape.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { assertStatus } from '../helpers/status.js';
import { goJsonSyntaxError } from '../../src/codec/go-json.js';

const CM = '/api/v1/namespaces/default/configmaps';
let s: TestServer;
before(async () => {
  s = await startServer();
  assert.equal((await request(s.url, 'POST', CM, configMap('c'))).status, 201);
});
after(() => s.stop());

test('a create body that is not JSON names the kind, the Go parse error and the body', async () => {
  const cases: [string, string][] = [
    ['abc', "invalid character 'a' looking for beginning of value (616263)"],
    [
      '{"metadata": {"name": "x"},}',
      'invalid character \'}\' looking for beginning of object key string ({"metadata": {"name": "x"},})',
    ],
    [
      '{"metadata":{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"',
      'unexpected end of JSON input ({"metadata":{"name":"aaaaaaaaa ...)',
    ],
  ];
  for (const [body, tail] of cases) {
    const r = await request(s.url, 'POST', '/api/v1/namespaces', body);
    assertStatus(r, 400, 'BadRequest');
    assert.equal(
      r.json.message,
      `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: ${tail}`,
    );
  }
  const put = await request(s.url, 'PUT', `${CM}/c`, '{"metadata":{"name":"c"');
  assert.equal(
    put.json.message,
    'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata":{"name":"c")',
  );
});

test('patches that are not JSON: Go syntax errors, prefixed for JSON and merge patches', async () => {
  const patch = (type: string, body: string) =>
    request(s.url, 'PATCH', `${CM}/c`, body, { 'content-type': `application/${type}+json` });
  assert.equal((await patch('strategic-merge-patch', '{"metadata":')).json.message, 'unexpected end of JSON input');
  assert.equal(
    (await patch('merge-patch', '{"metadata":x')).json.message,
    "error decoding patch: invalid character 'x' looking for beginning of value",
  );
  assert.equal(
    (await patch('json-patch', '[{"op" "add"}]')).json.message,
    "error decoding patch: invalid character '\"' after object key",
  );
});

test('a strategic merge patch giving a map field a string: cannot restore map from string', async () => {
  const r = await request(s.url, 'PATCH', `${CM}/c`, '{"metadata":{"labels":"invalid"}}', {
    'content-type': 'application/strategic-merge-patch+json',
  });
  assertStatus(r, 422, 'Invalid');
  const cause = 'Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string';
  assert.equal(r.json.message, ` "" is invalid: patch: ${cause}`);
  assert.deepEqual(r.json.details, { causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'patch' }] });
  const list = await request(s.url, 'PATCH', `${CM}/c`, '{"metadata":{"finalizers":{"a":1}}}', {
    'content-type': 'application/strategic-merge-patch+json',
  });
  assert.match(list.json.message, /cannot restore slice from map$/);
});

test('Go json scanner messages', () => {
  const cases: [string, string | undefined][] = [
    ['{"a":1}', undefined],
    ['  [1, 2.5e-3, true, null, "x\\u00e9"] ', undefined],
    ['12', undefined],
    ['', 'unexpected end of JSON input'],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
    ['[1 2]', "invalid character '2' after array element"],
    ['tru', 'unexpected end of JSON input'],
    ['trux', "invalid character 'x' in literal true (expecting 'e')"],
    ['{"a":1}x', "invalid character 'x' after top-level value"],
    ['"a\tb"', "invalid character '\\t' in string literal"],
    ['"\\x"', "invalid character 'x' in string escape code"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['-a', "invalid character 'a' in numeric literal"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
  ];
  for (const [text, want] of cases) assert.equal(goJsonSyntaxError(Buffer.from(text)), want, text);
});
