/**
 * ABAC: each policy line shape (user, group, wildcards, apiGroup, namespace, resource,
 * nonResourcePath exact / `*` / `/foo/*`, readonly), the v0 form, bad lines naming the file and
 * line, rules for SelfSubjectRulesReview, and the mode in the real server next to RBAC.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { AbacAuthorizer, parsePolicyFile, parsePolicyLine, type PolicySpec } from '../../src/auth/authz/abac.js';
import type { Attributes } from '../../src/auth/authz/attributes.js';
import type { UserInfo } from '../../src/api/user.js';
import { Pki, request, startAuthServer, startupError } from '../auth/helpers.js';

const GROUPS = ['abac.authorization.plat.io'];
const alice: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'] };
const bob: UserInfo = { username: 'bob', groups: ['system:authenticated'] };
const anon: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const res = (user: UserInfo, verb: string, resource: string, namespace = '', apiGroup = ''): Attributes => ({
  user,
  verb,
  resource,
  apiGroup,
  resourceRequest: true,
  path: '',
  ...(namespace ? { namespace } : {}),
});
const path = (user: UserInfo, verb: string, p: string): Attributes => ({
  user,
  verb,
  resource: '',
  apiGroup: '',
  resourceRequest: false,
  path: p,
});
const line = (spec: object) =>
  JSON.stringify({ apiVersion: 'abac.authorization.plat.io/v1beta1', kind: 'Policy', spec });
const allows = (spec: object, a: Attributes) =>
  new AbacAuthorizer([parsePolicyLine(line(spec), GROUPS)]).authorize(a).decision === 'allow';

test('line shapes: user, group, namespace, resource, apiGroup, each exact or `*`', () => {
  const rows: [object, Attributes, boolean, string][] = [
    [
      { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' },
      res(alice, 'delete', 'pods', 'a'),
      true,
      'user with all wildcards',
    ],
    [
      { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' },
      res(bob, 'get', 'pods', 'a'),
      false,
      'another user',
    ],
    [
      { group: 'dev', namespace: 'a', resource: 'pods', apiGroup: '' },
      res(alice, 'create', 'pods', 'a'),
      true,
      'group, exact namespace and resource',
    ],
    [
      { group: 'dev', namespace: 'a', resource: 'pods', apiGroup: '' },
      res(alice, 'create', 'pods', 'b'),
      false,
      'another namespace',
    ],
    [
      { group: 'dev', namespace: 'a', resource: 'pods', apiGroup: '' },
      res(alice, 'create', 'secrets', 'a'),
      false,
      'another resource',
    ],
    [
      { group: 'dev', namespace: 'a', resource: 'deployments', apiGroup: '' },
      res(alice, 'get', 'deployments', 'a', 'apps'),
      false,
      'another group',
    ],
    [
      { group: 'dev', namespace: 'a', resource: 'deployments', apiGroup: 'apps' },
      res(alice, 'get', 'deployments', 'a', 'apps'),
      true,
      'exact group',
    ],
    [
      { user: 'alice', resource: 'namespaces', apiGroup: '' },
      res(alice, 'list', 'namespaces'),
      true,
      'no namespace: cluster scope only',
    ],
    [
      { user: 'alice', resource: 'pods', apiGroup: '' },
      res(alice, 'list', 'pods', 'a'),
      false,
      'no namespace does not match a namespaced request',
    ],
    [
      { user: 'alice', group: 'ops', namespace: '*', resource: '*', apiGroup: '*' },
      res(alice, 'get', 'pods', 'a'),
      false,
      'user and group must both match',
    ],
    [
      { user: '*', namespace: '*', resource: '*', apiGroup: '*' },
      res(bob, 'get', 'pods', 'a'),
      true,
      '`*` user: every authenticated user',
    ],
    [
      { user: '*', namespace: '*', resource: '*', apiGroup: '*' },
      res(anon, 'get', 'pods', 'a'),
      false,
      '... not anonymous ones',
    ],
    [
      { group: 'system:unauthenticated', namespace: '*', resource: '*', apiGroup: '*', readonly: true },
      res(anon, 'get', 'pods', 'a'),
      true,
      'system:unauthenticated',
    ],
    [
      { namespace: '*', resource: '*', apiGroup: '*' },
      res(alice, 'get', 'pods', 'a'),
      false,
      'no subject matches nobody',
    ],
    [
      { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' },
      path(alice, 'get', '/api'),
      false,
      'a resource policy never matches a path',
    ],
  ];
  for (const [spec, a, want, why] of rows) assert.equal(allows(spec, a), want, why);
});

test('readonly allows only get, list and watch', () => {
  const spec = { user: 'alice', namespace: '*', resource: '*', apiGroup: '*', readonly: true };
  for (const verb of ['get', 'list', 'watch']) assert.equal(allows(spec, res(alice, verb, 'pods', 'a')), true, verb);
  for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection'])
    assert.equal(allows(spec, res(alice, verb, 'pods', 'a')), false, verb);
  assert.equal(allows({ ...spec, readonly: false }, res(alice, 'delete', 'pods', 'a')), true);
});

test('nonResourcePath: `*`, exact, and a trailing `*` for sub-paths; never a resource request', () => {
  assert.equal(allows({ user: 'alice', nonResourcePath: '*' }, path(alice, 'get', '/metrics')), true);
  assert.equal(allows({ user: 'alice', nonResourcePath: '/version' }, path(alice, 'get', '/version')), true);
  assert.equal(allows({ user: 'alice', nonResourcePath: '/version' }, path(alice, 'get', '/version/x')), false);
  assert.equal(allows({ user: 'alice', nonResourcePath: '/foo/*' }, path(alice, 'get', '/foo/bar/baz')), true);
  assert.equal(allows({ user: 'alice', nonResourcePath: '/foo/*' }, path(alice, 'get', '/foobar')), false);
  assert.equal(
    allows({ user: 'alice', nonResourcePath: '*', readonly: true }, path(alice, 'post', '/x')),
    false,
    'readonly and a post',
  );
  assert.equal(allows({ user: 'alice', nonResourcePath: '*' }, res(alice, 'get', 'pods', 'a')), false);
});

test('v0 lines (no apiVersion): empty fields are wildcards; comments and blank lines are skipped', () => {
  const ps = parsePolicyFile(
    '/p',
    '# comment\n\n{"user":"alice"}\n{"readonly":true}\n{"user":"bob","namespace":"b","resource":"pods"}\n',
    GROUPS,
  );
  assert.equal(ps.length, 3);
  assert.deepEqual(ps[0], {
    user: 'alice',
    group: '',
    readonly: false,
    apiGroup: '*',
    resource: '*',
    namespace: '*',
    nonResourcePath: '*',
  } satisfies PolicySpec);
  const z = new AbacAuthorizer(ps);
  assert.equal(
    z.authorize(res(bob, 'get', 'pods', 'x')).decision,
    'allow',
    'an empty v0 subject is every authenticated user (readonly)',
  );
  assert.equal(z.authorize(res(bob, 'delete', 'pods', 'x')).decision, 'noOpinion');
  assert.equal(z.authorize(res(bob, 'delete', 'pods', 'b')).decision, 'allow');
  assert.deepEqual(z.authorize(res(anon, 'get', 'pods', 'x')), { decision: 'noOpinion', reason: 'No policy matched.' });
});

test('a bad line is an error naming the file, the line number and its text', () => {
  const bad: [string, RegExp][] = [
    ['{"apiVersion":"abac.authorization.plat.io/v1beta1","kind":"Policy","spec":{"user":"a"', /couldn't decode policy/],
    [
      '{"apiVersion":"abac.authorization.plat.io/v2","kind":"Policy","spec":{}}',
      /no kind "Policy" is registered for version "abac.authorization.plat.io\/v2"/,
    ],
    ['{"apiVersion":"abac.authorization.plat.io/v1beta1","kind":"Role","spec":{}}', /no kind "Role" is registered/],
    [
      '{"apiVersion":"abac.authorization.plat.io/v1beta1","kind":"Policy","spec":{"readonly":"yes"}}',
      /cannot unmarshal string into Go struct field Policy.spec.readonly of type bool/,
    ],
    [
      '{"apiVersion":"abac.authorization.plat.io/v1beta1","kind":"Policy","spec":{"user":7}}',
      /cannot unmarshal number into Go struct field Policy.spec.user of type string/,
    ],
    ['[1]', /cannot unmarshal array/],
  ];
  for (const [text, why] of bad) {
    assert.throws(
      () => parsePolicyFile('/etc/abac.jsonl', `${line({ user: 'x' })}\n\n${text}\n`, GROUPS),
      (e: Error) => {
        assert.ok(e.message.startsWith(`error reading policy file /etc/abac.jsonl, line 3: ${text}: `), e.message);
        assert.match(e.message, why);
        return true;
      },
    );
  }
});

test("rulesFor lists the subject's policies in the namespace (readonly = get, list, watch)", () => {
  const z = new AbacAuthorizer(
    parsePolicyFile(
      '/p',
      [
        line({ user: 'alice', namespace: 'a', resource: 'pods', apiGroup: '', readonly: true }),
        line({ group: 'dev', namespace: '*', resource: '*', apiGroup: 'apps' }),
        line({ user: 'alice', namespace: '*', nonResourcePath: '/healthz' }),
        line({ user: 'alice', nonResourcePath: '/version' }),
        line({ user: 'bob', namespace: '*', resource: '*', apiGroup: '*' }),
      ].join('\n'),
      GROUPS,
    ),
  );
  assert.deepEqual(z.rulesFor(alice, 'a'), {
    resourceRules: [
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['*'] },
    ],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/healthz'] }],
    incomplete: false,
    errors: [],
  });
  assert.equal(z.rulesFor(alice, 'b').resourceRules.length, 1);
  assert.deepEqual(
    z.rulesFor(alice, '').nonResourceRules.map((r) => r.nonResourceURLs![0]),
    ['/healthz', '/version'],
    'a policy without namespace counts at the cluster scope only (upstream)',
  );
});

test('server: --authorization-mode RBAC,ABAC allows what either allows; a bad policy file stops the start naming the line', async () => {
  const pki = new Pki();
  try {
    writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a,dev\nbob-token,bob,uid-b\n');
    writeFileSync(
      pki.path('abac.jsonl'),
      [
        line({ user: 'alice', namespace: 'default', resource: 'configmaps', apiGroup: '', readonly: true }),
        line({ group: 'dev', nonResourcePath: '/metrics' }),
      ].join('\n') + '\n',
    );
    const s = await startAuthServer([
      '--token-auth-file',
      pki.path('tokens.csv'),
      '--authorization-mode',
      'RBAC,ABAC',
      '--authorization-policy-file',
      pki.path('abac.jsonl'),
    ]);
    try {
      const tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
      const as = (t: string, method: string, p: string, body?: unknown) =>
        request(s.secureUrl, tls, method, p, body, { authorization: `Bearer ${t}` });
      assert.equal(
        (await as('alice-token', 'GET', '/api/v1/namespaces/default/configmaps')).status,
        200,
        'ABAC allows',
      );
      assert.notEqual((await as('alice-token', 'GET', '/metrics')).status, 403, 'ABAC path policy');
      assert.equal((await as('bob-token', 'GET', '/metrics')).status, 403);
      assert.equal((await as('alice-token', 'GET', '/apis')).status, 200, 'RBAC (system:discovery) allows');
      const write = await as('alice-token', 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'c' },
        data: {},
      });
      assert.equal(write.status, 403, 'readonly');
      assert.equal(
        write.json.message,
        'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default": No policy matched.',
      );
      assert.equal((await as('bob-token', 'GET', '/api/v1/namespaces/default/configmaps')).status, 403);
      const rules = await as('alice-token', 'POST', '/apis/authorization.plat.io/v1/selfsubjectrulesreviews', {
        kind: 'SelfSubjectRulesReview',
        apiVersion: 'authorization.plat.io/v1',
        spec: { namespace: 'default' },
      });
      assert.ok(
        rules.json.status.resourceRules.some(
          (r: any) => r.resources?.[0] === 'configmaps' && r.verbs.join() === 'get,list,watch',
        ),
        'ABAC rules in the rules review',
      );
    } finally {
      await s.stop();
      s.cleanup();
    }
    writeFileSync(
      pki.path('bad.jsonl'),
      `${line({ user: 'a' })}\n{"apiVersion":"abac.authorization.plat.io/v1beta1","kind":"Policy","spec":{"readonly":1}}\n`,
    );
    const bad = await startupError([
      '--authorization-mode',
      'ABAC',
      '--authorization-policy-file',
      pki.path('bad.jsonl'),
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      new RegExp(
        `error reading policy file ${pki.path('bad.jsonl').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, line 2: `,
      ),
    );
    const missing = await startupError(['--authorization-mode', 'ABAC']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /authorization-mode ABAC's authorization policy file not passed/);
  } finally {
    pki.cleanup();
  }
});
