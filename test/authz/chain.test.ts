/**
 * The authorizer chain: order, short-circuits, the privileged group, the modes, rules from
 * every mode, and `--authorization-mode` parsing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthorizerChain,
  alwaysAllow,
  alwaysDeny,
  buildChain,
  type Authorizer,
  type AuthorizerResult,
} from '../../src/auth/authz/authorizer.js';
import { parseAuthorizationModes } from '../../src/auth/authz/options.js';
import { parseArgs } from '../../src/server/options.js';
import type { Attributes } from '../../src/auth/authz/attributes.js';
import type { MaybeAsync } from '../../src/api/user.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const root = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const a = (user = bob): Attributes => ({
  user,
  verb: 'get',
  apiGroup: '',
  resource: 'pods',
  namespace: 'x',
  resourceRequest: true,
  path: '',
});

/** The result of a synchronous authorizer (every mode here answers from memory). */
export function now(r: MaybeAsync<AuthorizerResult>): AuthorizerResult {
  assert.ok(!(r instanceof Promise), 'a synchronous answer');
  return r as AuthorizerResult;
}

function fixed(name: string, r: AuthorizerResult, calls: string[]): Authorizer {
  return {
    name,
    authorize: () => {
      calls.push(name);
      return r;
    },
    rulesFor: () => ({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: name === 'inc',
      errors: r.error ? [r.error] : [],
    }),
  };
}

test('the first allow or deny decides; later authorizers are not asked', () => {
  for (const first of ['allow', 'deny'] as const) {
    const calls: string[] = [];
    const chain = new AuthorizerChain([
      fixed('a', { decision: 'noOpinion', reason: 'not mine' }, calls),
      fixed('b', { decision: first, reason: 'b says' }, calls),
      fixed('c', { decision: 'allow', reason: '' }, calls),
    ]);
    assert.deepEqual(chain.authorize(a()), { decision: first, reason: 'b says' });
    assert.deepEqual(calls, ['a', 'b']);
  }
});

test('all no opinion: no opinion (a deny) with every reason, one a line, and the evaluation errors', () => {
  const calls: string[] = [];
  const chain = new AuthorizerChain([
    fixed('a', { decision: 'noOpinion', reason: 'first' }, calls),
    fixed('b', { decision: 'noOpinion', reason: '' }, calls),
    fixed('inc', { decision: 'noOpinion', reason: 'third', error: 'boom' }, calls),
  ]);
  assert.deepEqual(chain.authorize(a()), { decision: 'noOpinion', reason: 'first\nthird', error: 'boom' });
  assert.deepEqual(calls, ['a', 'b', 'inc']);
  const rules = chain.rulesFor(bob, 'x');
  assert.equal(rules.incomplete, true);
  assert.deepEqual(rules.errors, ['boom']);
  assert.deepEqual(new AuthorizerChain([]).authorize(a()), { decision: 'noOpinion', reason: '' });
});

test('an asynchronous answer (a webhook) continues the chain after it; the chain stays synchronous until one is met', async () => {
  const calls: string[] = [];
  const later = (name: string, r: AuthorizerResult): Authorizer => ({
    ...fixed(name, r, calls),
    authorize: () => {
      calls.push(name);
      return Promise.resolve(r);
    },
  });
  const chain = new AuthorizerChain([
    fixed('a', { decision: 'noOpinion', reason: 'a: no' }, calls),
    later('hook', { decision: 'noOpinion', reason: 'hook: no', error: 'e1' }),
    fixed('c', { decision: 'allow', reason: 'c: yes' }, calls),
  ]);
  const r = chain.authorize(a());
  assert.ok(r instanceof Promise);
  assert.deepEqual(await r, { decision: 'allow', reason: 'c: yes' });
  assert.deepEqual(calls, ['a', 'hook', 'c']);
  const denied = new AuthorizerChain([
    later('hook', { decision: 'deny', reason: 'nope' }),
    fixed('never', { decision: 'allow', reason: '' }, calls),
  ]);
  assert.deepEqual(await denied.authorize(a()), { decision: 'deny', reason: 'nope' }, 'a deny short-circuits');
  const none = new AuthorizerChain([
    later('hook', { decision: 'noOpinion', reason: 'x', error: 'down' }),
    fixed('b', { decision: 'noOpinion', reason: 'y' }, calls),
  ]);
  assert.deepEqual(await none.authorize(a()), { decision: 'noOpinion', reason: 'x\ny', error: 'down' });
  assert.ok(!calls.includes('never'));
});

test('--authorization-mode with files: ABAC needs --authorization-policy-file, Webhook its config file, and the reverse; --authorization-config excludes them all', () => {
  assert.throws(() => parseArgs(['--authorization-mode', 'ABAC']), {
    message: "authorization-mode ABAC's authorization policy file not passed",
  });
  assert.throws(() => parseArgs(['--authorization-mode', 'Webhook']), {
    message: "authorization-mode Webhook's authorization config file not passed",
  });
  assert.throws(() => parseArgs(['--authorization-policy-file', '/x']), {
    message: 'cannot specify --authorization-policy-file without mode ABAC',
  });
  assert.throws(() => parseArgs(['--authorization-webhook-config-file', '/x']), {
    message: 'cannot specify --authorization-webhook-config-file without mode Webhook',
  });
  const conflict =
    /^--authorization-config cannot be used in conjunction with --authorization-mode, --authorization-policy-file, --authorization-webhook-config-file/;
  for (const extra of [
    ['--authorization-mode', 'RBAC'],
    ['--authorization-webhook-cache-authorized-ttl', '1m'],
    ['--authorization-webhook-version', 'v1'],
  ]) {
    assert.throws(() => parseArgs(['--authorization-config', '/c.yaml', ...extra]), { message: conflict }, extra[0]);
  }
  const o = parseArgs([
    '--authorization-mode',
    'Webhook,RBAC',
    '--authorization-webhook-config-file',
    '/k',
    '--authorization-webhook-cache-authorized-ttl',
    '1m30s',
    '--authorization-webhook-cache-unauthorized-ttl',
    '250ms',
    '--authorization-webhook-version',
    'v1',
  ]);
  assert.equal(o.authorizationWebhookCacheAuthorizedTtlMs, 90_000);
  assert.equal(o.authorizationWebhookCacheUnauthorizedTtlMs, 250);
  assert.equal(o.authorizationWebhookVersion, 'v1');
  assert.equal(parseArgs([]).authorizationWebhookCacheAuthorizedTtlMs, 300_000);
  assert.equal(parseArgs([]).authorizationWebhookCacheUnauthorizedTtlMs, 30_000);
  assert.equal(parseArgs([]).authorizationWebhookVersion, 'v1beta1');
  assert.throws(
    () => parseArgs(['--authorization-webhook-cache-authorized-ttl', '5 minutes']),
    /invalid duration "5 minutes"/,
  );
  assert.throws(() => parseArgs(['--authorization-webhook-version', 'v2']), {
    message: '--authorization-webhook-version must be v1 or v1beta1, got "v2"',
  });
});

test('modes: system:masters first, then AlwaysAllow / AlwaysDeny / RBAC in the order given', () => {
  const calls: string[] = [];
  const rbac = fixed('RBAC', { decision: 'noOpinion', reason: '' }, calls);
  assert.equal(
    now(buildChain(['AlwaysDeny'], { RBAC: rbac }).authorize(a(root))).decision,
    'allow',
    'masters pass even AlwaysDeny',
  );
  assert.deepEqual(now(buildChain(['AlwaysDeny'], { RBAC: rbac }).authorize(a())), {
    decision: 'noOpinion',
    reason: 'Everything is forbidden.',
  });
  assert.equal(
    now(buildChain(['AlwaysDeny', 'AlwaysAllow'], { RBAC: rbac }).authorize(a())).decision,
    'allow',
    'AlwaysDeny has no opinion, so a later mode decides',
  );
  assert.equal(now(buildChain(['RBAC', 'AlwaysAllow'], { RBAC: rbac }).authorize(a())).decision, 'allow');
  assert.deepEqual(calls, ['RBAC']);
  assert.equal(now(buildChain(['RBAC'], { RBAC: rbac }).authorize(a())).decision, 'noOpinion');
  assert.deepEqual(buildChain(['AlwaysAllow'], { RBAC: rbac }).rulesFor(bob, 'x'), alwaysAllow.rulesFor(bob, 'x'));
  assert.deepEqual(alwaysAllow.rulesFor(bob, 'x'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
    errors: [],
  });
  assert.deepEqual(alwaysDeny.rulesFor(bob, 'x').resourceRules, []);
});

test('--authorization-mode: default Node,RBAC, comma list, unknown, unsupported and repeated modes refused', () => {
  assert.deepEqual(parseArgs([]).authorizationModes, ['Node', 'RBAC']);
  assert.deepEqual(parseArgs(['--authorization-mode', 'AlwaysDeny,RBAC,AlwaysAllow']).authorizationModes, [
    'AlwaysDeny',
    'RBAC',
    'AlwaysAllow',
  ]);
  assert.throws(() => parseAuthorizationModes('RBAC,Magic'), {
    message:
      '--authorization-mode must be a comma-separated list of AlwaysAllow, AlwaysDeny, ABAC, Node, RBAC, Webhook, got "RBAC,Magic"',
  });
  assert.throws(() => parseAuthorizationModes(''), /must be a comma-separated list/);
  assert.deepEqual(parseAuthorizationModes('Node,RBAC'), ['Node', 'RBAC']);
  assert.throws(() => parseAuthorizationModes('RBAC,RBAC'), {
    message: '--authorization-mode has mode specified more than once: RBAC',
  });
});
