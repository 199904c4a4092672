import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addAuthenticatedGroup, firstUser, type AuthResult } from '../../src/api/user.js';
import { bearerAuthenticator, bearerToken, unionTokenAuthenticator } from '../../src/auth/bearer.js';

const user = (username: string): AuthResult => ({ kind: 'user', user: { username, groups: [] } });
const err = (reason: string): AuthResult => ({ kind: 'error', reason });
const notMine: AuthResult = { kind: 'notMine' };

test('firstUser: first user wins, errors are remembered, all not-mine is not mine', async () => {
  assert.deepEqual(
    firstUser([notMine, err('bad'), user('a'), user('b')], (r) => r),
    user('a'),
  );
  assert.deepEqual(
    firstUser([notMine, err('first'), err('second')], (r) => r),
    err('first'),
  );
  assert.deepEqual(
    firstUser([notMine, notMine], (r) => r),
    notMine,
  );
  assert.deepEqual(
    firstUser([], (r: AuthResult) => r),
    notMine,
  );
});

test('firstUser: stays synchronous until an authenticator answers with a promise', async () => {
  const sync = firstUser([notMine, user('a')], (r) => r);
  assert.ok(!(sync instanceof Promise));
  const calls: string[] = [];
  const async = firstUser(['x', 'y', 'z'], (n) => {
    calls.push(n);
    if (n === 'x') return Promise.resolve(err('x failed'));
    if (n === 'y') return Promise.reject(new Error('boom'));
    return notMine;
  });
  assert.ok(async instanceof Promise);
  assert.deepEqual(await async, err('x failed'));
  assert.deepEqual(calls, ['x', 'y', 'z']);
  assert.deepEqual(await firstUser(['x', 'y'], (n) => (n === 'x' ? Promise.resolve(notMine) : user('y'))), user('y'));
});

test('bearer header parsing as upstream', () => {
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('  bearer abc  '), 'abc');
  assert.equal(bearerToken('Bearer abc def'), 'abc');
  assert.equal(bearerToken('Basic abc'), undefined);
  assert.equal(bearerToken('Bearer'), undefined);
  assert.equal(bearerToken('Bearer  '), undefined);
});

test('bearer authenticator: no header is not mine; an unknown token is an error, never anonymous', async () => {
  const tokens = unionTokenAuthenticator([
    { authenticateToken: (t) => (t === 'good' ? user('u') : notMine) },
    { authenticateToken: (t) => Promise.resolve(t === 'jwt' ? user('sa') : notMine) },
  ]);
  const a = bearerAuthenticator(tokens, []);
  assert.deepEqual(a.authenticate({ authorization: '' }), notMine);
  assert.deepEqual(a.authenticate({ authorization: 'Basic Zm9vOmJhcg==' }), notMine);
  assert.deepEqual(a.authenticate({ authorization: 'Bearer good' }), user('u'));
  assert.deepEqual(await a.authenticate({ authorization: 'Bearer jwt' }), user('sa'));
  const bad = await a.authenticate({ authorization: 'Bearer secret-value' });
  assert.equal(bad.kind, 'error');
  assert.doesNotMatch(JSON.stringify(bad), /secret-value/);
});

test('authenticated group is added once, and not to unauthenticated users', () => {
  const u = { username: 'a', groups: ['g'] };
  const out = addAuthenticatedGroup(u);
  assert.deepEqual(out.groups, ['g', 'system:authenticated']);
  assert.equal(addAuthenticatedGroup(u), out, 'memoized per user object');
  assert.deepEqual(u.groups, ['g'], 'input not changed');
  assert.deepEqual(addAuthenticatedGroup({ username: 'x', groups: ['system:unauthenticated'] }).groups, [
    'system:unauthenticated',
  ]);
});
