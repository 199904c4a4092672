import { test } from 'node:test';
import assert from 'node:assert/strict';
import { impersonate, readImpersonation, type ImpersonationRequest } from '../../src/filters/impersonation.js';
import type { Attributes, Authorizer, UserInfo } from '../../src/api/user.js';

/** masters may, everyone else gets no opinion (the chain itself is tested in test/authz) */
const mastersOnly: Authorizer = (a) => ({ decision: a.user.groups.includes('system:masters') ? 'allow' : 'noOpinion' });

const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const alice = { username: 'alice', groups: ['system:authenticated'] };
const deps = { authorize: mastersOnly, authenticationGroup: 'authentication.plat.io' };
const req = (p: Partial<ImpersonationRequest>): ImpersonationRequest => ({
  user: '',
  uid: '',
  groups: [],
  extra: {},
  ...p,
});

test('headers: repeatable groups and extras, extra keys lower-cased and percent-decoded', () => {
  const headers: [string, string][] = [
    ['impersonate-user', 'bob'],
    ['impersonate-group', 'g1'],
    ['impersonate-group', 'g2'],
    ['impersonate-uid', '42'],
    ['impersonate-extra-scopes', 'a'],
    ['impersonate-extra-scopes', 'b'],
    ['impersonate-extra-example.com%2fkey', 'v'],
    ['accept', '*/*'],
  ];
  const src = {
    getHeader: (n: string) => headers.find(([k]) => k === n)?.[1] ?? '',
    forEach: (cb: (k: string, v: string) => void) => headers.forEach(([k, v]) => cb(k, v)),
  };
  assert.deepEqual(readImpersonation(src), {
    user: 'bob',
    uid: '42',
    groups: ['g1', 'g2'],
    extra: { scopes: ['a', 'b'], 'example.com/key': ['v'] },
  });
  assert.equal(readImpersonation({ getHeader: () => '', forEach: () => assert.fail('walked headers') }), undefined);
});

test('a master may impersonate; groups get system:authenticated as upstream', () => {
  assert.deepEqual(impersonate(admin, req({ user: 'bob' }), deps), {
    username: 'bob',
    groups: ['system:authenticated'],
  });
  assert.deepEqual(impersonate(admin, req({ user: 'bob', groups: ['g'], uid: 'u', extra: { k: ['v'] } }), deps), {
    username: 'bob',
    uid: 'u',
    groups: ['g', 'system:authenticated'],
    extra: { k: ['v'] },
  });
  assert.deepEqual((impersonate(admin, req({ user: 'system:anonymous' }), deps) as UserInfo).groups, [
    'system:unauthenticated',
  ]);
  assert.deepEqual(
    (impersonate(admin, req({ user: 'bob', groups: ['system:unauthenticated'] }), deps) as UserInfo).groups,
    ['system:unauthenticated'],
  );
  assert.deepEqual((impersonate(admin, req({ user: 'system:serviceaccount:ns1:bot' }), deps) as UserInfo).groups, [
    'system:serviceaccounts',
    'system:serviceaccounts:ns1',
    'system:authenticated',
  ]);
});

test('others are forbidden with the upstream message; each value is checked in upstream order', () => {
  assert.throws(
    () => impersonate(alice, req({ user: 'bob' }), deps),
    (e: any) => {
      assert.equal(e.status.code, 403);
      assert.equal(e.status.reason, 'Forbidden');
      assert.equal(
        e.status.message,
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
      assert.deepEqual(e.status.details, { name: 'bob', kind: 'users' });
      return true;
    },
  );
  const seen: Attributes[] = [];
  const recording = {
    ...deps,
    authorize: (a: Attributes) => {
      seen.push(a);
      return { decision: a.resource === 'uids' ? ('deny' as const) : ('allow' as const), reason: 'no uids' };
    },
  };
  assert.throws(
    () =>
      impersonate(
        alice,
        req({ user: 'system:serviceaccount:ns1:bot', groups: ['g'], extra: { k: ['v'] }, uid: '7' }),
        recording,
      ),
    (e: any) =>
      e.status.message ===
      'uids.authentication.plat.io "7" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.plat.io" at the cluster scope: no uids',
  );
  assert.deepEqual(
    seen.map((a) => [a.verb, a.apiGroup, a.resource, a.subresource, a.namespace, a.name]),
    [
      ['impersonate', '', 'serviceaccounts', undefined, 'ns1', 'bot'],
      ['impersonate', '', 'groups', undefined, undefined, 'g'],
      ['impersonate', 'authentication.plat.io', 'userextras', 'k', undefined, 'v'],
      ['impersonate', 'authentication.plat.io', 'uids', undefined, undefined, '7'],
    ],
  );
});

test('groups, uid or extra without a user is an error', () => {
  assert.throws(
    () => impersonate(admin, req({ groups: ['g'] }), deps),
    (e: any) => e.status.code === 500 && /without impersonating a user/.test(e.status.message),
  );
});
