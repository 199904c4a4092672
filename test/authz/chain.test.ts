/**
 * The authorizer chain: order, short-circuits, the privileged group, the modes, rules from
 * every mode, and `--authorization-mode` parsing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthorizerChain, alwaysAllow, alwaysDeny, buildChain, type Authorizer, type AuthorizerResult } from '../../src/auth/authz/authorizer.js';
import { parseAuthorizationModes } from '../../src/auth/authz/options.js';
import { parseArgs } from '../../src/server/options.js';
import type { Attributes } from '../../src/auth/authz/attributes.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const root = { username: 'root', groups: ['system:masters', 'system:authenticated'] };
const a = (user = bob): Attributes => ({ user, verb: 'get', apiGroup: '', resource: 'pods', namespace: 'x', resourceRequest: true, path: '' });

function fixed(name: string, r: AuthorizerResult, calls: string[]): Authorizer {
  return { name, authorize: () => { calls.push(name); return r; }, rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: name === 'inc', errors: r.error ? [r.error] : [] }) };
}

test('the first allow or deny decides; later authorizers are not asked', () => {
  for (const first of ['allow', 'deny'] as const) {
    const calls: string[] = [];
    const chain = new AuthorizerChain([fixed('a', { decision: 'noOpinion', reason: 'not mine' }, calls), fixed('b', { decision: first, reason: 'b says' }, calls), fixed('c', { decision: 'allow', reason: '' }, calls)]);
    assert.deepEqual(chain.authorize(a()), { decision: first, reason: 'b says' });
    assert.deepEqual(calls, ['a', 'b']);
  }
});

test('all no opinion: no opinion (a deny) with every reason, one a line, and the evaluation errors', () => {
  const calls: string[] = [];
  const chain = new AuthorizerChain([
    fixed('a', { decision: 'noOpinion', reason: 'first' }, calls), fixed('b', { decision: 'noOpinion', reason: '' }, calls),
    fixed('inc', { decision: 'noOpinion', reason: 'third', error: 'boom' }, calls),
  ]);
  assert.deepEqual(chain.authorize(a()), { decision: 'noOpinion', reason: 'first\nthird', error: 'boom' });
  assert.deepEqual(calls, ['a', 'b', 'inc']);
  const rules = chain.rulesFor(bob, 'x');
  assert.equal(rules.incomplete, true);
  assert.deepEqual(rules.errors, ['boom']);
  assert.deepEqual(new AuthorizerChain([]).authorize(a()), { decision: 'noOpinion', reason: '' });
});

test('modes: system:masters first, then AlwaysAllow / AlwaysDeny / RBAC in the order given', () => {
  const calls: string[] = [];
  const rbac = fixed('RBAC', { decision: 'noOpinion', reason: '' }, calls);
  assert.equal(buildChain(['AlwaysDeny'], rbac).authorize(a(root)).decision, 'allow', 'masters pass even AlwaysDeny');
  assert.deepEqual(buildChain(['AlwaysDeny'], rbac).authorize(a()), { decision: 'noOpinion', reason: 'Everything is forbidden.' });
  assert.equal(buildChain(['AlwaysDeny', 'AlwaysAllow'], rbac).authorize(a()).decision, 'allow', 'AlwaysDeny has no opinion, so a later mode decides');
  assert.equal(buildChain(['RBAC', 'AlwaysAllow'], rbac).authorize(a()).decision, 'allow');
  assert.deepEqual(calls, ['RBAC']);
  assert.equal(buildChain(['RBAC'], rbac).authorize(a()).decision, 'noOpinion');
  assert.deepEqual(buildChain(['AlwaysAllow'], rbac).rulesFor(bob, 'x'), alwaysAllow.rulesFor(bob, 'x'));
  assert.deepEqual(alwaysAllow.rulesFor(bob, 'x'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false, errors: [],
  });
  assert.deepEqual(alwaysDeny.rulesFor(bob, 'x').resourceRules, []);
});

test('--authorization-mode: default RBAC, comma list, unknown, unsupported and repeated modes refused', () => {
  assert.deepEqual(parseArgs([]).authorizationModes, ['RBAC']);
  assert.deepEqual(parseArgs(['--authorization-mode', 'AlwaysDeny,RBAC,AlwaysAllow']).authorizationModes, ['AlwaysDeny', 'RBAC', 'AlwaysAllow']);
  assert.throws(() => parseAuthorizationModes('RBAC,Magic'), { message: '--authorization-mode must be a comma-separated list of AlwaysAllow, AlwaysDeny, RBAC, got "RBAC,Magic"' });
  assert.throws(() => parseAuthorizationModes(''), /must be a comma-separated list/);
  assert.throws(() => parseAuthorizationModes('Node,RBAC'), { message: '--authorization-mode: Node is not supported yet (supported: AlwaysAllow, AlwaysDeny, RBAC)' });
  assert.throws(() => parseAuthorizationModes('RBAC,RBAC'), { message: '--authorization-mode has mode specified more than once: RBAC' });
});
