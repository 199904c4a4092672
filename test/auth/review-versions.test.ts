/**
 * Review kinds by version (v1.32 reference): TokenReview is served at authentication.plat.io/v1
 * only (its v1beta1 was removed in 1.22); authentication.plat.io/v1beta1 is a beta group off by
 * default and, when enabled with --runtime-config, serves SelfSubjectReview only.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Pki, startAuthServer, type AuthServer } from './helpers.js';
import { request } from '../helpers/server.js';

const servers: AuthServer[] = [];
const pki = new Pki();
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of servers) s.cleanup();
  pki.cleanup();
});

const A = '/apis/authentication.plat.io';
const tr = (apiVersion: string) => ({ apiVersion, kind: 'TokenReview', spec: { token: 'alice-token' } });

test('authentication.plat.io/v1beta1 is off by default; TokenReview v1 answers', async () => {
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a\n');
  const s = await startAuthServer(['--token-auth-file', pki.path('tokens.csv')]);
  servers.push(s);
  const ok = await request(s.url, 'POST', `${A}/v1/tokenreviews`, tr('authentication.plat.io/v1'));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.status.user.username, 'alice');
  for (const path of [`${A}/v1beta1/tokenreviews`, `${A}/v1beta1/selfsubjectreviews`]) {
    const r = await request(s.url, 'POST', path, tr('authentication.plat.io/v1beta1'));
    assert.equal(r.status, 404, `${path}: ${r.text}`);
    assert.equal(r.json.kind, 'Status');
  }
  const groups = await request(s.url, 'GET', `${A}`);
  assert.deepEqual(
    groups.json.versions.map((v: any) => v.version),
    ['v1'],
  );
});

test('--runtime-config authentication.plat.io/v1beta1=true serves SelfSubjectReview v1beta1, still no TokenReview v1beta1', async () => {
  const s = await startAuthServer(['--runtime-config', 'authentication.plat.io/v1beta1=true']);
  servers.push(s);
  const ssr = await request(s.url, 'POST', `${A}/v1beta1/selfsubjectreviews`, {
    apiVersion: 'authentication.plat.io/v1beta1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(ssr.status, 201, ssr.text);
  assert.equal(ssr.json.apiVersion, 'authentication.plat.io/v1beta1');
  assert.equal(ssr.json.status.userInfo.username, 'system:unsecured');
  const list = await request(s.url, 'GET', `${A}/v1beta1`);
  assert.deepEqual(
    list.json.resources.map((r: any) => r.name),
    ['selfsubjectreviews'],
  );
  const r = await request(s.url, 'POST', `${A}/v1beta1/tokenreviews`, tr('authentication.plat.io/v1beta1'));
  assert.equal(r.status, 404, r.text);
});
