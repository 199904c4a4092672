/**
 * kubectl v1.32 against RBAC, served under the upstream API domain (kubectl's typed clients for
 * access reviews only know `authorization.k8s.io`): a token user bound to `view` in one
 * namespace lists pods there, is refused a delete with the upstream message, and
 * `auth can-i` (SelfSubjectAccessReview) and `auth can-i --list` (SelfSubjectRulesReview) agree.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, startAuthServer, type AuthServer } from '../auth/helpers.js';
import { runKubectl, type Run } from '../helpers/kubectl.js';

let pki: Pki;
let s: AuthServer;
let kubeconfig: string;

function kubectl(...args: string[]): Promise<Run> {
  return runKubectl(['--request-timeout', '20s', '--cache-dir', pki.path('cache'), ...args], {
    KUBECONFIG: kubeconfig,
    HOME: pki.dir,
  });
}

before(async () => {
  pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), 'bob-token,bob,uid-b\nroot-token,root,uid-r,system:masters\n');
  s = await startAuthServer(['--token-auth-file', pki.path('tokens.csv'), '--api-domain', 'k8s.io']);
  kubeconfig = pki.path('kubeconfig');
  const ca = readFileSync(`${s.dataDir}/pki/ca.crt`).toString('base64');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${s.secureUrl}`,
      `    certificate-authority-data: ${ca}`,
      'users:',
      '- name: bob',
      '  user: {token: bob-token}',
      '- name: root',
      '  user: {token: root-token}',
      'contexts:',
      '- name: bob',
      '  context: {cluster: c, user: bob}',
      '- name: root',
      '  context: {cluster: c, user: root}',
      'current-context: bob',
      '',
    ].join('\n'),
  );
  for (const args of [
    ['create', 'namespace', 'ns1'],
    ['create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob', '-n', 'ns1'],
  ]) {
    const r = await kubectl('--context', 'root', ...args);
    assert.equal(r.code, 0, r.stderr);
  }
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('a user bound to view lists pods in its namespace, and a delete is refused with the upstream message', async () => {
  const list = await kubectl('get', 'pods', '-n', 'ns1');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stderr, /No resources found in ns1 namespace/);
  const elsewhere = await kubectl('get', 'pods', '-n', 'default');
  assert.notEqual(elsewhere.code, 0);
  assert.match(
    elsewhere.stderr,
    /Error from server \(Forbidden\): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"/,
  );
  const del = await kubectl('delete', 'pod', 'x', '-n', 'ns1');
  assert.notEqual(del.code, 0);
  assert.match(
    del.stderr,
    /Error from server \(Forbidden\): pods "x" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace "ns1"/,
  );
});

test('auth can-i: yes where bound, no elsewhere, no for writes', async () => {
  const yes = await kubectl('auth', 'can-i', 'get', 'pods', '-n', 'ns1');
  assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
  assert.equal(yes.code, 0);
  const elsewhere = await kubectl('auth', 'can-i', 'get', 'pods', '-n', 'default');
  assert.equal(elsewhere.stdout.trim(), 'no');
  assert.equal(elsewhere.code, 1);
  const write = await kubectl('auth', 'can-i', 'create', 'pods', '-n', 'ns1');
  assert.equal(write.stdout.trim(), 'no');
  assert.equal(
    (await kubectl('auth', 'can-i', 'get', 'secrets', '-n', 'ns1')).stdout.trim(),
    'no',
    'view has no secrets',
  );
  assert.equal(
    (await kubectl('auth', 'can-i', 'get', '/apis')).stdout.trim(),
    'yes',
    'discovery for every authenticated user',
  );
  assert.equal((await kubectl('--context', 'root', 'auth', 'can-i', '*', '*')).stdout.trim(), 'yes');
  assert.equal(
    (await kubectl('--context', 'root', 'auth', 'can-i', 'list', 'pods', '-n', 'ns1', '--as', 'bob')).stdout.trim(),
    'yes',
    'impersonated',
  );
});

test('auth can-i --list shows the rules of the namespace', async () => {
  const r = await kubectl('auth', 'can-i', '--list', '-n', 'ns1');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  assert.match(r.stdout, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
  assert.match(r.stdout, /^\s+\[\/apis\/\*\]\s+\[\]\s+\[get\]$/m);
  const other = await kubectl('auth', 'can-i', '--list', '-n', 'default');
  assert.doesNotMatch(other.stdout, /^pods\s/m);
});
