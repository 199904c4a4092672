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

/** The rules as first written (split, filter, slice, decode every part): the one-pass parser must agree. */
function referenceInfo(method: string, path: string, query: URLSearchParams) {
  const segs = path.split('/').filter((s) => s !== '');
  const out = { isResourceRequest: false, verb: method.toLowerCase(), apiPrefix: '', apiGroup: '', apiVersion: '' };
  const info = { ...out, path, namespace: '', resource: '', subresource: '', name: '', parts: [] as string[] };
  if (segs.length === 0 || (segs[0] !== 'api' && segs[0] !== 'apis')) return info;
  info.apiPrefix = segs[0]!;
  let rest = segs.slice(1);
  if (info.apiPrefix === 'apis') {
    if (rest.length < 2) return info;
    info.apiGroup = rest[0]!;
    rest = rest.slice(1);
  } else if (rest.length < 1) return info;
  info.apiVersion = rest[0]!;
  rest = rest.slice(1);
  if (rest.length === 0) return info;
  info.isResourceRequest = true;
  const watchPath = rest[0] === 'watch';
  if (watchPath) rest = rest.slice(1);
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1]!;
    if (rest.length > 2 && !['status', 'finalize'].includes(rest[2]!)) rest = rest.slice(2);
  }
  info.parts = rest.map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  info.resource = info.parts[0] ?? '';
  if (info.parts.length >= 2) info.name = info.parts[1]!;
  if (info.parts.length >= 3) info.subresource = info.parts[2]!;
  if (info.resource === 'namespaces' && info.parts.length >= 2) info.namespace = '';
  const w = query.get('watch');
  const watch = watchPath || (w !== null && w !== '0' && w.toLowerCase() !== 'false');
  const single = info.parts.length >= 2;
  const verbs: Record<string, string> = {
    GET: watch ? 'watch' : single ? 'get' : 'list',
    HEAD: watch ? 'watch' : single ? 'get' : 'list',
    POST: 'create',
    PUT: 'update',
    PATCH: 'patch',
    DELETE: single ? 'delete' : 'deletecollection',
  };
  info.verb = verbs[method] ?? method.toLowerCase();
  return info;
}

test('the one-pass parser agrees with the split-and-filter rules on generated paths', () => {
  const words = [
    'api',
    'apis',
    'v1',
    'apps',
    'watch',
    'namespaces',
    'ns',
    'status',
    'finalize',
    'pods',
    'p%2Fq',
    'bad%zz',
    'proxy',
    'a%20b',
    '',
  ];
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'custom'];
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 3000; i++) {
    const n = next(8);
    const segs = Array.from({ length: n }, (_, k) =>
      k === 0 && next(4) > 0 ? ['api', 'apis'][next(2)]! : words[next(words.length)]!,
    );
    const path = (next(3) === 0 ? '' : '/') + segs.join(next(5) === 0 ? '//' : '/') + (next(4) === 0 ? '/' : '');
    const query = new URLSearchParams(['', 'watch=1', 'watch=false', 'watch=0', 'watch=TRUE'][next(5)]);
    const method = methods[next(methods.length)]!;
    assert.deepEqual(
      { ...parseRequestInfo(method, path, query) },
      referenceInfo(method, path, query),
      `${method} ${path}?${query}`,
    );
  }
});

test('a repeated GET of a path shares one frozen RequestInfo; a watch query or another method gets its own', () => {
  const path = '/api/v1/namespaces/shared/configmaps/one';
  const a = parseRequestInfo('GET', path, q());
  assert.equal(parseRequestInfo('GET', `${path}`, q('pretty=1')), a);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.parts));
  const watch = parseRequestInfo('GET', path, q('watch=1'));
  assert.equal(watch.verb, 'watch');
  assert.notEqual(watch, a);
  assert.equal(parseRequestInfo('GET', path, q()).verb, 'get');
  const del = parseRequestInfo('DELETE', path, q());
  assert.equal(del.verb, 'delete');
  assert.notEqual(parseRequestInfo('DELETE', path, q()), del);
});

test('a repeated POST of a path shares one frozen RequestInfo, apart from the GETs of that path', () => {
  const path = '/api/v1/namespaces/shared/configmaps';
  const a = parseRequestInfo('POST', path, q());
  assert.equal(a.verb, 'create');
  assert.equal(parseRequestInfo('POST', path, q('dryRun=All')), a);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.parts));
  const list = parseRequestInfo('GET', path, q());
  assert.equal(list.verb, 'list');
  assert.notEqual(list, a);
  assert.equal(parseRequestInfo('POST', path, q()).verb, 'create');
  const eviction = parseRequestInfo('POST', '/api/v1/namespaces/shared/pods/p/eviction', q());
  assert.equal(eviction.subresource, 'eviction');
  assert.equal(eviction.name, 'p');
});
