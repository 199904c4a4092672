/**
 * Auditing on the secure port: the authenticated user, the authorization decision annotations
 * (allow with RBAC's reason, forbid), and impersonation (user and impersonatedUser).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { waitForAudit } from '../helpers/audit.js';

let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
let log: string;
const as = (token: string, path: string, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, 'GET', path, undefined, { authorization: `Bearer ${token}`, ...headers });
const auditId = (r: { headers: Record<string, string | string[] | undefined> }) => String(r.headers['audit-id']);

before(async () => {
  pki = new Pki();
  log = pki.path('audit.log');
  writeFileSync(pki.path('tokens.csv'), 'bob-token,bob,uid-b\nroot-token,root,uid-r,system:masters\n');
  writeFileSync(
    pki.path('policy.yaml'),
    'apiVersion: audit.plat.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n',
  );
  s = await startAuthServer([
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--audit-policy-file',
    pki.path('policy.yaml'),
    '--audit-log-path',
    log,
  ]);
  tls = { ca: readFileSync(join(s.dataDir, 'pki/ca.crt')) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('a forbidden request is audited with decision forbid and the authenticated user', async () => {
  const r = await as('bob-token', '/api/v1/namespaces/default/secrets');
  assert.equal(r.status, 403);
  const [ev] = await waitForAudit(log, (e) => e.auditID === auditId(r));
  assert.equal(ev!.user.username, 'bob');
  assert.ok(ev!.user.groups.includes('system:authenticated'));
  assert.equal(ev!.responseStatus.code, 403);
  assert.equal(ev!.responseStatus.reason, 'Forbidden');
  assert.equal(ev!.annotations['authorization.plat.io/decision'], 'forbid');
  assert.equal(typeof ev!.annotations['authorization.plat.io/reason'], 'string');
});

test('an allowed request carries decision allow; impersonation shows both users', async () => {
  const r = await as('root-token', '/api/v1/namespaces/default/configmaps');
  assert.equal(r.status, 200);
  const [ev] = await waitForAudit(log, (e) => e.auditID === auditId(r));
  assert.equal(ev!.annotations['authorization.plat.io/decision'], 'allow');
  const imp = await as('root-token', '/api/v1/namespaces/default/configmaps', { 'impersonate-user': 'bob' });
  assert.equal(imp.status, 403);
  const [iev] = await waitForAudit(log, (e) => e.auditID === auditId(imp));
  assert.equal(iev!.user.username, 'root');
  assert.equal(iev!.impersonatedUser.username, 'bob');
  assert.equal(iev!.annotations['authorization.plat.io/decision'], 'forbid');
});

test('a request that fails authentication is audited once (ResponseStarted, no user, 401)', async () => {
  const r = await request(s.secureUrl, tls, 'GET', '/api/v1/namespaces/default/pods?probe=unauthenticated', undefined, {
    authorization: 'Bearer wrong-token',
  });
  assert.equal(r.status, 401);
  const events = await waitForAudit(
    log,
    (e) => e.requestURI === '/api/v1/namespaces/default/pods?probe=unauthenticated',
  );
  assert.equal(events.length, 1);
  const [ev] = events;
  assert.equal(ev!.stage, 'ResponseStarted');
  assert.deepEqual(ev!.user, {});
  assert.deepEqual(ev!.responseStatus, { metadata: {}, message: 'Authentication failed', code: 401 });
  assert.deepEqual(ev!.objectRef, { resource: 'pods', namespace: 'default', apiVersion: 'v1' });
});
