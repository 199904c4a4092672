import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsvLine, parseTokenFile, tokenFileAuthenticator } from '../../src/auth/token-file.js';

test('csv records: quoted fields keep commas, "" escapes a quote, leading spaces are trimmed', () => {
  assert.deepEqual(parseCsvLine('t1,alice,u1,"g1,g2"'), ['t1', 'alice', 'u1', 'g1,g2']);
  assert.deepEqual(parseCsvLine('t1, bob, u2'), ['t1', 'bob', 'u2']);
  assert.deepEqual(parseCsvLine('t1,"say ""hi""",u3,'), ['t1', 'say "hi"', 'u3', '']);
  assert.throws(() => parseCsvLine('t1,"open,u'), /quoted-field/);
  assert.throws(() => parseCsvLine('t1,a"b,u'), /bare "/);
});

test('token file: groups split on commas, blank lines skipped', () => {
  const m = parseTokenFile('t1,alice,u1,"dev,ops"\n\nt2,bob,u2\r\nt3,carol,u3,single\n');
  assert.deepEqual(m.get('t1'), { username: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
  assert.deepEqual(m.get('t2'), { username: 'bob', uid: 'u2', groups: [] });
  assert.deepEqual(m.get('t3')!.groups, ['single']);
  assert.equal(m.size, 3);
});

test('token file: a malformed record is an error naming its line', () => {
  assert.throws(
    () => parseTokenFile('t1,alice,u1\nt2,bob\n'),
    /^Error: line 2: must have at least 3 columns \(token, user name, user uid\), found 2$/,
  );
  assert.throws(() => parseTokenFile('\n\n,alice,u1\n'), /^Error: line 3: empty token$/);
  assert.throws(() => parseTokenFile('t1,alice,u1\nt2,"bob,u2\n'), /^Error: line 2: /);
});

test('token file authenticator: synchronous, not mine for unknown tokens, audience agnostic', () => {
  const a = tokenFileAuthenticator(parseTokenFile('t1,alice,u1\n'), ['api']);
  const r = a.authenticateToken('t1', []);
  assert.ok(!(r instanceof Promise));
  assert.equal((r as any).user.username, 'alice');
  assert.deepEqual(a.authenticateToken('nope', []), { kind: 'notMine' });
  assert.deepEqual((a.authenticateToken('t1', ['api', 'other']) as any).audiences, ['api']);
  assert.deepEqual(a.authenticateToken('t1', ['other']), { kind: 'notMine' });
});
