/**
 * The README quick start as a new user follows it (issue 20 acceptance): the server started
 * as `npm start -- --api-domain k8s.io` starts it (the entry point on a fresh data directory;
 * free ports instead of 8080/6443), then kubectl v1.32 with the written admin kubeconfig:
 * `create token` for the default service account, a token bound to a pod authenticating on
 * its own (`auth whoami`), a bogus token refused with 401, and `explain` printing upstream's
 * description.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKubectl, type Run } from '../helpers/kubectl.js';
import { startAuthServer, type AuthServer } from '../auth/helpers.js';
import { until } from '../helpers/poll.js';

let s: AuthServer;
let home = '';
before(async () => {
  s = await startAuthServer(['--api-domain', 'k8s.io']);
  home = mkdtempSync(join(tmpdir(), 'plat-quick-start-'));
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** kubectl with the admin kubeconfig the server wrote (as the README says). */
const admin = (...args: string[]): Promise<Run> =>
  runKubectl(['--cache-dir', join(home, 'cache'), ...args], {
    KUBECONFIG: join(s.dataDir, 'admin.kubeconfig'),
    HOME: home,
  });
/** kubectl with nothing but a bearer token (no client certificate). */
const withToken = (token: string, ...args: string[]): Promise<Run> =>
  runKubectl(
    [
      '--server',
      s.secureUrl,
      '--certificate-authority',
      join(s.dataDir, 'pki/ca.crt'),
      '--token',
      token,
      '--cache-dir',
      join(home, 'cache-token'),
      ...args,
    ],
    { KUBECONFIG: '/dev/null', HOME: home },
  );

function ok(r: Run, what: string): string {
  assert.equal(r.code, 0, `${what} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

test('quick start: create token, a pod-bound token authenticates, auth whoami, explain', async () => {
  assert.equal(statSync(join(s.dataDir, 'pki/service-account.key')).mode & 0o777, 0o600, 'generated signing key');
  const issuer = JSON.parse(ok(await admin('get', '--raw', '/.well-known/openid-configuration'), 'discovery'));
  assert.equal(issuer.issuer, 'https://kubernetes.default.svc.cluster.local');
  assert.ok(JSON.parse(ok(await admin('get', '--raw', '/openid/v1/jwks'), 'jwks')).keys.length >= 1);

  // the default account appears once the namespace controller has run
  await until(
    async () => ((await admin('get', 'serviceaccount', 'default')).code === 0 ? true : undefined),
    'the default service account',
  );
  const token = ok(await admin('create', 'token', 'default'), 'create token').trim();
  const me = ok(await withToken(token, 'auth', 'whoami', '-o', 'json'), 'auth whoami');
  assert.equal(JSON.parse(me).status.userInfo.username, 'system:serviceaccount:default:default');

  ok(await admin('run', 'web', '--image', 'nginx', '--restart', 'Never'), 'run');
  const podToken = ok(
    await admin('create', 'token', 'default', '--bound-object-kind', 'Pod', '--bound-object-name', 'web'),
    'create bound token',
  ).trim();
  const podUser = JSON.parse(ok(await withToken(podToken, 'auth', 'whoami', '-o', 'json'), 'auth whoami (pod token)'))
    .status.userInfo;
  assert.equal(podUser.username, 'system:serviceaccount:default:default');
  // upstream's extra keys: authentication.kubernetes.io/pod-name (the product domain, not k8s.io)
  assert.deepEqual((podUser.extra as Record<string, string[]>)['authentication.kubernetes.io/pod-name'], ['web']);

  const bogus = await withToken('not-a-token', 'get', 'namespaces');
  assert.notEqual(bogus.code, 0);
  assert.match(bogus.stderr, /You must be logged in to the server|Unauthorized/);

  const explain = ok(await admin('explain', 'deployment.spec.replicas'), 'explain');
  assert.match(explain, /FIELD: +replicas <integer>/);
  assert.match(explain, /DESCRIPTION:\n\s+Number of desired pods\./);
});
