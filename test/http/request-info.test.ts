import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../src/http/request-info.js';

const q = (s = '') => new URLSearchParams(s);

const CASES: [string, string, string, Partial<ReturnType<typeof parseRequestInfo>>][] = [
  ['GET', '/api/v1/namespaces', '', { verb: 'list', resource: 'namespaces', namespace: '', name: '' }],
  ['GET', '/api/v1/namespaces/default', '', { verb: 'get', resource: 'namespaces', name: 'default', namespace: '' }],
  [
    'PUT',
    '/api/v1/namespaces/default/status',
    '',
    { verb: 'update', resource: 'namespaces', name: 'default', subresource: 'status' },
  ],
  [
    'PUT',
    '/api/v1/namespaces/default/finalize',
    '',
    { verb: 'update', resource: 'namespaces', name: 'default', subresource: 'finalize' },
  ],
  ['GET', '/api/v1/namespaces/ns1/pods', '', { verb: 'list', resource: 'pods', namespace: 'ns1' }],
  ['GET', '/api/v1/namespaces/ns1/pods', 'watch=1', { verb: 'watch', resource: 'pods', namespace: 'ns1' }],
  ['GET', '/api/v1/namespaces/ns1/pods', 'watch=false', { verb: 'list' }],
  ['GET', '/api/v1/watch/namespaces/ns1/pods/p', '', { verb: 'watch', resource: 'pods', name: 'p', namespace: 'ns1' }],
  ['GET', '/api/v1/pods', '', { verb: 'list', resource: 'pods', namespace: '' }],
  [
    'DELETE',
    '/apis/apps/v1/namespaces/x/deployments',
    '',
    { verb: 'deletecollection', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments' },
  ],
  ['POST', '/apis/apps/v1/namespaces/x/deployments', '', { verb: 'create' }],
  ['PATCH', '/apis/apps/v1/namespaces/x/deployments/d/scale', '', { verb: 'patch', name: 'd', subresource: 'scale' }],
  [
    'GET',
    '/apis/rbac.authorization.plat.io/v1/clusterroles/admin',
    '',
    { verb: 'get', apiGroup: 'rbac.authorization.plat.io', resource: 'clusterroles', name: 'admin' },
  ],
];

test('request info follows the upstream path rules', () => {
  for (const [method, path, query, want] of CASES) {
    const got = parseRequestInfo(method, path, q(query));
    assert.equal(got.isResourceRequest, true, path);
    for (const [k, v] of Object.entries(want)) assert.equal((got as any)[k], v, `${method} ${path}?${query}: ${k}`);
  }
});

test('non-resource paths are not resource requests', () => {
  for (const p of [
    '/',
    '/api',
    '/api/v1',
    '/apis',
    '/apis/apps',
    '/apis/apps/v1',
    '/healthz',
    '/version',
    '/openapi/v2',
  ]) {
    assert.equal(parseRequestInfo('GET', p, q()).isResourceRequest, false, p);
  }
});

test('percent-encoded names decode; malformed escapes stay as sent', () => {
  assert.equal(parseRequestInfo('GET', '/api/v1/namespaces/a/configmaps/x%2Dy', q()).name, 'x-y');
  assert.equal(parseRequestInfo('GET', '/api/v1/namespaces/a/configmaps/%zz', q()).name, '%zz');
});
