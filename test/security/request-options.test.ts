/**
 * Request options read as upstream reads them (issue 18, "also align"), over the real secure
 * listener:
 * - a repeated `Impersonate-User` (or `Impersonate-Uid`) header means its first value (Go's
 *   Header.Get), for the authorization check and the resulting identity alike;
 * - a `fieldManager` longer than 128 bytes or with a non-printable character is upstream's
 *   422 on create, update and patch.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { grant } from '../authz/helpers.js';

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const SSR_BODY = { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' };
const CMS = '/api/v1/namespaces/default/configmaps';
let s: TokenServer;
let tls: TlsClient;

before(async () => {
  s = await startTokenServer('proxy-token,proxy,uid-p,"proxy-group"\nwriter-token,writer,uid-w\n');
  tls = s.tls;
  // proxy may impersonate alice only
  await grant(
    s.url,
    'impersonate-alice',
    [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['alice'] }],
    ['proxy-group'],
  );
  await grant(
    s.url,
    'writer-cms',
    [{ verbs: ['create', 'update', 'patch', 'get'], apiGroups: [''], resources: ['configmaps'] }],
    ['system:authenticated'],
  );
});
after(async () => {
  await s?.close();
});

/** node sends one header line per array element */
const twice = (name: string, values: string[]) => ({ [name]: values }) as unknown as Record<string, string>;

test('a repeated Impersonate-User header: the first value is checked and used', async () => {
  const asProxy = (users: string[]) =>
    request(s.secureUrl, tls, 'POST', SSR, SSR_BODY, {
      authorization: 'Bearer proxy-token',
      ...twice('impersonate-user', users),
    });
  const first = await asProxy(['alice', 'root']);
  assert.equal(first.status, 201, first.text);
  assert.equal(first.json.status.userInfo.username, 'alice');
  const rootFirst = await asProxy(['root', 'alice']);
  assert.equal(rootFirst.status, 403, rootFirst.text);
  assert.match(rootFirst.json.message, /cannot impersonate resource "users" in API group "" at the cluster scope/);
  assert.match(rootFirst.json.message, /^users "root" is forbidden/);
});

test('fieldManager longer than 128 bytes or not printable: 422 on create, update and patch', async () => {
  const long = 'm'.repeat(129);
  const as = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(s.secureUrl, tls, method, path, body, { authorization: 'Bearer writer-token', ...headers });
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fm' }, data: { a: 'b' } };
  const created = await as('POST', `${CMS}?fieldManager=${long}`, cm);
  assert.equal(created.status, 422, created.text);
  assert.equal(
    created.json.message,
    'CreateOptions.meta.plat.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
  );
  assert.deepEqual(created.json.details.causes, [
    { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 128 bytes', field: 'fieldManager' },
  ]);
  assert.equal((await as('POST', `${CMS}?fieldManager=${'m'.repeat(128)}`, cm)).status, 201, 'exactly 128 is fine');
  const current = (await as('GET', `${CMS}/fm`, undefined)).json;
  const updated = await as('PUT', `${CMS}/fm?fieldManager=${long}`, current);
  assert.equal(updated.status, 422, updated.text);
  assert.equal(
    updated.json.message,
    'UpdateOptions.meta.plat.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
  );
  const patched = await as(
    'PATCH',
    `${CMS}/fm?fieldManager=${long}`,
    { data: { c: 'd' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 422, patched.text);
  assert.equal(
    patched.json.message,
    'PatchOptions.meta.plat.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
  );
  const control = await as('POST', `${CMS}?fieldManager=a%01b`, { ...cm, metadata: { name: 'fm2' } });
  assert.equal(control.status, 422, control.text);
  assert.equal(
    control.json.message,
    'CreateOptions.meta.plat.io "" is invalid: fieldManager: Invalid value: "a\\u0001b": invalid character U+0001 (at position 1)',
  );
});
