import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAuthentication, ANONYMOUS } from '../../src/filters/authentication.js';
import type { FilterRequest } from '../../src/http/filter-request.js';
import type { AuthResult, Authenticator } from '../../src/api/user.js';

/** A uWS response stand-in recording what is written. */
function fakeRequest(method = 'GET', authorization = ''): FilterRequest & { res: any } {
  const res: any = {
    status: '',
    body: undefined as unknown,
    dataCb: undefined as undefined | ((ab: ArrayBuffer, last: boolean) => void),
    cork(cb: () => void) {
      cb();
    },
    writeStatus(s: string) {
      this.status = s;
      return this;
    },
    writeHeader() {
      return this;
    },
    end(b: unknown) {
      this.body = b;
    },
    onData(cb: any) {
      this.dataCb = cb;
    },
  };
  return {
    res,
    x: { res, aborted: false, done: false, headers: [] },
    method,
    path: '/api/v1/pods',
    query: new URLSearchParams(),
    headers: { accept: undefined, contentType: 'application/json', contentLength: 0, userAgent: undefined },
    credentials: { authorization },
    impersonation: undefined,
    user: undefined,
    body: undefined,
  };
}

const fixed = (r: AuthResult | Promise<AuthResult>): Authenticator => ({ authenticate: () => r });
const deps = (a: Authenticator, anonymous = true) => ({ authenticator: a, anonymous, maxRequestBodyBytes: 1024 });

test('a user gets system:authenticated and the request continues in the same call', () => {
  const seen: FilterRequest[] = [];
  const r = fakeRequest();
  withAuthentication((x) => seen.push(x), deps(fixed({ kind: 'user', user: { username: 'a', groups: ['g'] } })))(r);
  assert.equal(seen.length, 1, 'synchronous');
  assert.deepEqual(r.user, { username: 'a', groups: ['g', 'system:authenticated'] });
  assert.equal(r.body, undefined, 'no pre-read on the synchronous path');
});

test('no credentials: anonymous when enabled, 401 when not', () => {
  const r = fakeRequest();
  let called = 0;
  withAuthentication(() => called++, deps(fixed({ kind: 'notMine' })))(r);
  assert.equal(r.user, ANONYMOUS);
  assert.deepEqual(ANONYMOUS, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  const r2 = fakeRequest();
  withAuthentication(() => called++, deps(fixed({ kind: 'notMine' }), false))(r2);
  assert.equal(called, 1);
  assert.equal(r2.res.status, '401 Unauthorized');
});

test('an invalid credential is 401 with the generic Status even with anonymous on; the reason is logged, not sent', () => {
  const r = fakeRequest('GET', 'Bearer s3cr3t');
  const logged: string[] = [];
  withAuthentication(() => assert.fail('must not continue'), {
    ...deps(fixed({ kind: 'error', reason: 'invalid bearer token' })),
    onFailure: (m) => logged.push(m),
  })(r);
  assert.equal(r.res.status, '401 Unauthorized');
  assert.deepEqual(JSON.parse(r.res.body), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
  assert.deepEqual(logged, ['invalid bearer token']);
});

test('asynchronous authentication: the body starts buffering before the handler returns and reaches it', async () => {
  let resolve!: (r: AuthResult) => void;
  const pending = new Promise<AuthResult>((res) => {
    resolve = res;
  });
  const r = fakeRequest('POST', 'Bearer jwt');
  r.headers.contentLength = 11;
  const got = new Promise<string>((done) => {
    withAuthentication(
      (x) =>
        x.body!(
          (b) => done(`${x.user!.username}:${b.toString()}`),
          () => assert.fail('no failure'),
        ),
      deps(fixed(pending)),
    )(r);
  });
  assert.ok(r.res.dataCb, 'onData registered synchronously');
  r.res.dataCb(new TextEncoder().encode('hello ').buffer, false);
  r.res.dataCb(new TextEncoder().encode('world').buffer, true);
  resolve({ kind: 'user', user: { username: 'sa', groups: [] } });
  assert.equal(await got, 'sa:hello world');
});

test('asynchronous failure after the body arrived is still a 401; a client gone meanwhile gets nothing', async () => {
  const r = fakeRequest('PUT', 'Bearer jwt');
  withAuthentication(
    () => assert.fail('must not continue'),
    deps(fixed(Promise.resolve({ kind: 'error', reason: 'expired' }))),
  )(r);
  r.res.dataCb(new ArrayBuffer(0), true);
  await new Promise<void>((done) => setImmediate(done));
  assert.equal(r.res.status, '401 Unauthorized');
  const gone = fakeRequest('GET', 'Bearer jwt');
  gone.x.aborted = true;
  withAuthentication(
    () => assert.fail('must not continue'),
    deps(fixed(Promise.resolve({ kind: 'user', user: { username: 'a', groups: [] } }))),
  )(gone);
  await new Promise<void>((done) => setImmediate(done));
  assert.equal(gone.res.status, '');
});

test('a rejected request with a body gets its 401 once the body is read (uWS would reset the connection otherwise)', () => {
  const r = fakeRequest('POST', 'Bearer wrong');
  r.headers.contentLength = 4;
  withAuthentication(
    () => assert.fail('must not continue'),
    deps(fixed({ kind: 'error', reason: 'invalid bearer token' })),
  )(r);
  assert.equal(r.res.status, '', 'not answered before the body');
  r.res.dataCb(new TextEncoder().encode('{}{}').buffer, true);
  assert.equal(r.res.status, '401 Unauthorized');
});
