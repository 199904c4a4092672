/**
 * /metrics under RBAC (secure port): the bootstrap system:monitoring ClusterRole, bound to the
 * system:monitoring group, and cluster admins may read it; other users get upstream's 403.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';

let s: TokenServer;
let tls: TlsClient;
const as = (token: string, path: string) =>
  request(s.secureUrl, tls, 'GET', path, undefined, { authorization: `Bearer ${token}` });

before(async () => {
  s = await startTokenServer(
    'mon-token,prom,uid-m,system:monitoring\nbob-token,bob,uid-b\nroot-token,root,uid-r,system:masters\n',
  );
  tls = s.tls;
});
after(async () => {
  await s?.close();
});

test('system:monitoring and admins read /metrics; others are forbidden', async () => {
  const mon = await as('mon-token', '/metrics');
  assert.equal(mon.status, 200, mon.text);
  assert.match(mon.text, /^# HELP apiserver_current_inflight_requests \[STABLE\]/m);
  assert.equal((await as('root-token', '/metrics')).status, 200);
  const bob = await as('bob-token', '/metrics');
  assert.equal(bob.status, 403);
  assert.equal(bob.json.message, 'forbidden: User "bob" cannot get path "/metrics"');
  const anon = await request(s.secureUrl, tls, 'GET', '/metrics');
  assert.equal(anon.status, 403);
  // the monitoring group reads metrics and health, nothing else
  assert.equal((await as('mon-token', '/api/v1/namespaces')).status, 403);
});

test('rejected requests are counted too (403 with the resource labels)', async () => {
  assert.equal((await as('bob-token', '/api/v1/namespaces/default/secrets')).status, 403);
  // a forbidden /metrics of its own (it runs alone too)
  assert.equal((await as('bob-token', '/metrics')).status, 403);
  const text = (await as('mon-token', '/metrics')).text;
  assert.match(
    text,
    /^apiserver_request_total\{code="403",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="LIST",version="v1"\} 1$/m,
  );
  assert.match(
    text,
    /^apiserver_request_total\{code="403",component="apiserver",dry_run="",group="",resource="",scope="",subresource="\/metrics",verb="GET",version=""\} \d+$/m,
  );
});
