/**
 * Kills the mutants of src/auth/authz/attributes.ts that survived the fresh authorization
 * samples (`npm run mutate -- --module authz --sample 50 --seed 26`, then `--seed 27`;
 * docs/testing.md): the legacy watch path of a named object is a watch in a named group too (its
 * `watch` segment is the fourth there, the third under /api), while `?watch=true` on an object
 * path is a get (upstream RequestInfoFactory); selectors are attributes of collection verbs only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../../src/http/request-info.js';
import { attributesFor } from '../../../src/auth/authz/attributes.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const attrs = (path: string) => {
  const u = new URL(path, 'http://x');
  const a = attributesFor(parseRequestInfo('GET', u.pathname, u.searchParams), bob, u.searchParams);
  return [a.verb, a.resource, a.name ?? ''];
};

test('/watch/ paths of one object are watches under /api and /apis; ?watch=true on an object is a get', () => {
  assert.deepEqual(attrs('/apis/apps/v1/watch/namespaces/ns1/deployments/d1'), ['watch', 'deployments', 'd1']);
  assert.deepEqual(attrs('/api/v1/watch/namespaces/ns1/pods/p1'), ['watch', 'pods', 'p1']);
  assert.deepEqual(attrs('/apis/apps/v1/namespaces/ns1/deployments/d1?watch=true'), ['get', 'deployments', 'd1']);
  assert.deepEqual(attrs('/api/v1/namespaces/ns1/pods/p1?watch=true'), ['get', 'pods', 'p1']);
});

test('selectors are attributes of list, watch and deletecollection only', () => {
  const sel = (method: string, path: string) => {
    const u = new URL(path, 'http://x');
    const a = attributesFor(parseRequestInfo(method, u.pathname, u.searchParams), bob, u.searchParams);
    return [a.verb, a.labelSelector !== undefined, a.fieldSelector !== undefined];
  };
  assert.deepEqual(
    sel('DELETE', '/api/v1/namespaces/ns1/pods?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1'),
    ['deletecollection', true, true],
  );
  assert.deepEqual(sel('GET', '/api/v1/namespaces/ns1/pods?labelSelector=app%3Dweb'), ['list', true, false]);
  assert.deepEqual(
    sel('GET', '/api/v1/namespaces/ns1/pods/p1?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1'),
    ['get', false, false],
  );
  assert.deepEqual(sel('DELETE', '/api/v1/namespaces/ns1/pods/p1?labelSelector=app%3Dweb'), ['delete', false, false]);
});
