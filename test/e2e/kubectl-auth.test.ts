/**
 * kubectl v1.32 over TLS with a kubeconfig written here: `get ns` with a static token and with
 * a client certificate and with a bootstrap token, 401 for a bad token, and, served under the
 * upstream API domain, `auth whoami`, `create token` and `get ns` with that token (their typed
 * clients only know the upstream groups).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, startAuthServer, type AuthServer } from '../auth/helpers.js';
import { runKubectl, type Run } from '../helpers/kubectl.js';
import { grant } from '../authz/helpers.js';
import { request as plainRequest } from '../helpers/server.js';

let pki: Pki;
let s: AuthServer;
let upstream: AuthServer | undefined;
let upstreamArgs: string[];

function kubectl(kubeconfig: string, ...args: string[]): Promise<Run> {
  return runKubectl(['--request-timeout', '20s', '--cache-dir', pki.path('cache'), ...args], {
    KUBECONFIG: kubeconfig,
    HOME: pki.dir,
  });
}

/** A kubeconfig with one context per user: tok, bad, cert. */
function kubeconfig(name: string, server: AuthServer): string {
  const path = pki.path(`${name}.kubeconfig`);
  const ca = readFileSync(`${server.dataDir}/pki/ca.crt`).toString('base64');
  const ctx = (n: string) => `- name: ${n}\n  context: {cluster: c, user: ${n}}`;
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${server.secureUrl}`,
      `    certificate-authority-data: ${ca}`,
      'users:',
      '- name: tok',
      '  user: {token: alice-token}',
      '- name: bad',
      '  user: {token: not-a-valid-token}',
      '- name: cert',
      '  user:',
      `    client-certificate: ${pki.path('carol.crt')}`,
      `    client-key: ${pki.path('carol.key')}`,
      'contexts:',
      ctx('tok'),
      ctx('bad'),
      ctx('cert'),
      'current-context: tok',
      '',
    ].join('\n'),
  );
  return path;
}

before(async () => {
  pki = new Pki().ca('client-ca').client('client-ca', 'carol', '/O=system:masters/CN=carol');
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a,"dev,ops"\n');
  const common = ['--token-auth-file', pki.path('tokens.csv'), '--client-ca-file', pki.path('client-ca.crt')];
  s = await startAuthServer([...common, '--enable-bootstrap-token-auth']);
  // the secure port authorizes (RBAC): alice may list namespaces
  await grant(s.url, 'list-namespaces', [{ verbs: ['list'], apiGroups: [''], resources: ['namespaces'] }], ['dev']);
  upstreamArgs = [
    ...common,
    '--api-domain',
    'k8s.io',
    '--service-account-signing-key-file',
    pki.key('sa', 'rsa'),
    '--service-account-issuer',
    'https://issuer.test',
  ];
});
after(async () => {
  await Promise.all([s?.stop(), upstream?.stop()]);
  s?.cleanup();
  upstream?.cleanup();
  pki?.cleanup();
});

// The tests below are steps of one scenario, as upstream's test/cmd functions are: run them in order
// (the file runs alone; a single step alone has nothing to work on).
describe('kubectl authentication, a scenario in order (each step uses the credentials set up before it)', () => {
  test('get ns with a static token and with a client certificate', async () => {
    const kc = kubeconfig('plat', s);
    for (const context of ['tok', 'cert']) {
      const r = await kubectl(kc, '--context', context, 'get', 'ns', '-o', 'name');
      assert.equal(r.code, 0, `${context}: ${r.stderr}`);
      assert.match(r.stdout, /^namespace\/default$/m);
    }
  });

  test('get ns with a bootstrap token', async () => {
    const created = await plainRequest(s.url, 'POST', '/api/v1/namespaces/plat-system/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bootstrap-token-07401b', namespace: 'plat-system' },
      type: 'bootstrap.platform.io/token',
      stringData: {
        'token-id': '07401b',
        'token-secret': 'f395accd246ae52d',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:dev',
      },
    });
    assert.equal(created.status, 201, created.text);
    await grant(
      s.url,
      'bootstrappers-list-namespaces',
      [{ verbs: ['list'], apiGroups: [''], resources: ['namespaces'] }],
      ['system:bootstrappers:dev'],
    );
    // the secret reaches the authenticator with its change event, before the create is acknowledged
    const r = await kubectl(kubeconfig('plat', s), '--token', '07401b.f395accd246ae52d', 'get', 'ns', '-o', 'name');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^namespace\/default$/m);
  });

  test('a bad token is refused with 401', async () => {
    const r = await kubectl(kubeconfig('plat', s), '--context', 'bad', 'get', 'ns');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /You must be logged in to the server \(Unauthorized\)/);
    assert.doesNotMatch(r.stderr + r.stdout, /not-a-valid-token/);
  });

  test('auth whoami and create token under the upstream API domain', async () => {
    upstream = await startAuthServer(upstreamArgs);
    const kc = kubeconfig('upstream', upstream);
    const me = await kubectl(kc, 'auth', 'whoami', '-o', 'json');
    assert.equal(me.code, 0, me.stderr);
    assert.deepEqual(JSON.parse(me.stdout).status.userInfo, {
      username: 'alice',
      uid: 'uid-a',
      groups: ['dev', 'ops', 'system:authenticated'],
    });
    const table = await kubectl(kc, '--context', 'cert', 'auth', 'whoami');
    assert.match(table.stdout, /Username\s+carol/);
    assert.equal((await kubectl(kc, '--context', 'cert', 'create', 'serviceaccount', 'bot')).code, 0);
    const tok = await kubectl(kc, '--context', 'cert', 'create', 'token', 'bot');
    assert.equal(tok.code, 0, tok.stderr);
    const sa = await kubectl(
      kc,
      '--token',
      tok.stdout.trim(),
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username}',
    );
    assert.equal(sa.stdout, 'system:serviceaccount:default:bot', sa.stderr);
    // get ns with the TokenRequest token, once RBAC lets the account list namespaces
    assert.equal(
      (
        await kubectl(
          kc,
          '--context',
          'cert',
          'create',
          'clusterrole',
          'ns-reader',
          '--verb=list',
          '--resource=namespaces',
        )
      ).code,
      0,
    );
    assert.equal(
      (
        await kubectl(
          kc,
          '--context',
          'cert',
          'create',
          'clusterrolebinding',
          'bot-ns-reader',
          '--clusterrole=ns-reader',
          '--serviceaccount=default:bot',
        )
      ).code,
      0,
    );
    const ns = await kubectl(kc, '--token', tok.stdout.trim(), 'get', 'ns', '-o', 'name');
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /^namespace\/default$/m);
  });
});
