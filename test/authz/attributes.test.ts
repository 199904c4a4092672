/**
 * Request attributes from RequestInfo (every row of the spec's verb table and upstream's
 * details) and the exact 403 messages; the authorization filter over a fake uWS response.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../src/http/request-info.js';
import { attributesFor, forbiddenStatus, type Attributes } from '../../src/auth/authz/attributes.js';
import { withAuthorization } from '../../src/filters/authorization.js';
import { alwaysAllow, alwaysDeny } from '../../src/auth/authz/authorizer.js';
import type { FilterRequest } from '../../src/http/filter-request.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };

function attrs(method: string, url: string): Attributes {
  const u = new URL(url, 'http://x');
  return attributesFor(parseRequestInfo(method, u.pathname, u.searchParams), bob, u.searchParams);
}
const pick = (a: Attributes) => [a.verb, a.apiGroup, a.resource, a.subresource ?? '', a.namespace ?? '', a.name ?? ''];

test('verb table: every HTTP method on single objects and collections', () => {
  const rows: [string, string, string[]][] = [
    ['GET', '/api/v1/namespaces/default/pods/p', ['get', '', 'pods', '', 'default', 'p']],
    ['HEAD', '/api/v1/namespaces/default/pods/p', ['get', '', 'pods', '', 'default', 'p']],
    ['GET', '/api/v1/namespaces/default/pods', ['list', '', 'pods', '', 'default', '']],
    ['HEAD', '/api/v1/pods', ['list', '', 'pods', '', '', '']],
    ['GET', '/api/v1/namespaces/default/pods?watch=true', ['watch', '', 'pods', '', 'default', '']],
    ['GET', '/api/v1/watch/namespaces/default/pods', ['watch', '', 'pods', '', 'default', '']],
    ['POST', '/apis/apps/v1/namespaces/ns1/deployments', ['create', 'apps', 'deployments', '', 'ns1', '']],
    ['PUT', '/apis/apps/v1/namespaces/ns1/deployments/d', ['update', 'apps', 'deployments', '', 'ns1', 'd']],
    ['PUT', '/apis/apps/v1/namespaces/ns1/deployments/d/scale', ['update', 'apps', 'deployments', 'scale', 'ns1', 'd']],
    ['PATCH', '/api/v1/nodes/n1/status', ['patch', '', 'nodes', 'status', '', 'n1']],
    ['DELETE', '/api/v1/namespaces/default/configmaps/c', ['delete', '', 'configmaps', '', 'default', 'c']],
    ['DELETE', '/api/v1/namespaces/default/configmaps', ['deletecollection', '', 'configmaps', '', 'default', '']],
  ];
  for (const [method, url, want] of rows) {
    const a = attrs(method, url);
    assert.equal(a.resourceRequest, true, url);
    assert.deepEqual(pick(a), want, `${method} ${url}`);
  }
});

test('non-resource requests: the lower-cased method and the path', () => {
  for (const [method, path] of [
    ['GET', '/healthz'],
    ['HEAD', '/version'],
    ['POST', '/logs/x'],
    ['OPTIONS', '/apis'],
    ['PUT', '/api'],
  ]) {
    const a = attrs(method!, path!);
    assert.equal(a.resourceRequest, false);
    assert.equal(a.verb, method!.toLowerCase());
    assert.equal(a.path, path);
  }
});

test('upstream details: named watch by query is get, field selector names, a namespace is in itself', () => {
  assert.deepEqual(pick(attrs('GET', '/api/v1/namespaces/default/pods/p?watch=1')), [
    'get',
    '',
    'pods',
    '',
    'default',
    'p',
  ]);
  assert.deepEqual(pick(attrs('GET', '/api/v1/watch/namespaces/default/pods/p')), [
    'watch',
    '',
    'pods',
    '',
    'default',
    'p',
  ]);
  assert.deepEqual(pick(attrs('GET', '/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dp')), [
    'watch',
    '',
    'pods',
    '',
    'default',
    'p',
  ]);
  assert.deepEqual(
    pick(attrs('GET', '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3D%3Dp,spec.nodeName%3Dn')),
    ['list', '', 'pods', '', 'default', 'p'],
  );
  assert.equal(attrs('GET', '/api/v1/pods?fieldSelector=metadata.name!%3Dp').name, undefined);
  assert.equal(
    attrs('GET', '/api/v1/pods?fieldSelector=metadata.name%3Da%2Fb').name,
    undefined,
    'not a valid path segment',
  );
  assert.deepEqual(pick(attrs('GET', '/api/v1/namespaces/ns1')), ['get', '', 'namespaces', '', 'ns1', 'ns1']);
  assert.deepEqual(pick(attrs('PUT', '/api/v1/namespaces/ns1/finalize')), [
    'update',
    '',
    'namespaces',
    'finalize',
    'ns1',
    'ns1',
  ]);
  assert.deepEqual(pick(attrs('GET', '/api/v1/namespaces')), ['list', '', 'namespaces', '', '', '']);
});

test('403 messages and details: named, collection, cluster scope, subresource, group, non-resource', () => {
  const cases: [string, string, string, Record<string, string>][] = [
    [
      'GET',
      '/api/v1/namespaces/default/configmaps/x',
      'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"',
      { name: 'x', kind: 'configmaps' },
    ],
    [
      'GET',
      '/api/v1/namespaces/default/pods',
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
      { kind: 'pods' },
    ],
    [
      'GET',
      '/api/v1/nodes',
      'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope',
      { kind: 'nodes' },
    ],
    [
      'PATCH',
      '/apis/apps/v1/namespaces/a/deployments/d/scale',
      'deployments.apps "d" is forbidden: User "bob" cannot patch resource "deployments/scale" in API group "apps" in the namespace "a"',
      { name: 'd', group: 'apps', kind: 'deployments' },
    ],
    ['GET', '/metrics', 'forbidden: User "bob" cannot get path "/metrics"', {}],
  ];
  for (const [method, url, message, details] of cases) {
    const s = forbiddenStatus(attrs(method, url), '');
    assert.deepEqual(
      { ...s },
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason: 'Forbidden',
        details,
        code: 403,
      },
    );
  }
  assert.equal(
    forbiddenStatus(attrs('GET', '/metrics'), 'Everything is forbidden.').message,
    'forbidden: User "bob" cannot get path "/metrics": Everything is forbidden.',
  );
});

function fakeRequest(method: string, path: string, contentLength = 0): FilterRequest & { res: any } {
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
    path,
    query: new URLSearchParams(),
    headers: { accept: undefined, contentType: 'application/json', contentLength, userAgent: undefined },
    credentials: { authorization: '' },
    impersonation: undefined,
    user: bob,
    body: undefined,
  };
}

test('filter: allow continues with RequestInfo parsed once; deny answers 403 after draining the body', () => {
  const seen: FilterRequest[] = [];
  const ok = fakeRequest('GET', '/api/v1/namespaces/default/pods');
  withAuthorization((r) => seen.push(r), { authorizer: alwaysAllow, maxRequestBodyBytes: 1024 })(ok);
  assert.equal(seen.length, 1);
  assert.equal(ok.info?.verb, 'list');
  const denied = fakeRequest('POST', '/api/v1/namespaces/default/configmaps', 4);
  withAuthorization(() => assert.fail('must not continue'), { authorizer: alwaysDeny, maxRequestBodyBytes: 1024 })(
    denied,
  );
  assert.equal(denied.res.status, '', 'waits for the body');
  denied.res.dataCb(new TextEncoder().encode('{}{}').buffer, true);
  assert.equal(denied.res.status, '403 Forbidden');
  assert.equal(
    JSON.parse(denied.res.body).message,
    'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.',
  );
});
