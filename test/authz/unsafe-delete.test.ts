/**
 * The unsafe delete of a corrupt object needs, besides delete, the verb
 * `unsafe-delete-ignore-read-errors` on the resource (upstream's extra authorization).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { shardOf } from '../../src/actors/routing.js';

const G = 'rbac.authorization.plat.io';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
const as = (token: string, method: string, path: string, body?: unknown) =>
  request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${token}` });
const role = (name: string, verbs: string[]) => ({
  metadata: { name },
  rules: [{ apiGroups: [''], resources: ['secrets'], verbs }],
});
const binding = (name: string, roleName: string) => ({
  metadata: { name },
  roleRef: { apiGroup: G, kind: 'Role', name: roleName },
  subjects: [{ kind: 'User', apiGroup: G, name: 'bob' }],
});

before(async () => {
  pki = new Pki();
  const dataDir = pki.path('data');
  mkdirSync(dataDir);
  // a corrupt stored value, written before the server starts
  const db = open<string, string>({
    path: join(dataDir, `shard-${shardOf('/secrets', 2)}-of-2`),
    encoding: 'string',
    compression: false,
  });
  db.putSync('/secrets/default/broken', '{"not json');
  await db.close();
  writeFileSync(pki.path('tokens.csv'), 'bob-token,bob,uid-b\nroot-token,root,uid-r,system:masters\n');
  s = await startAuthServer(
    ['--token-auth-file', pki.path('tokens.csv'), '--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true'],
    dataDir,
  );
  tls = { ca: readFileSync(join(dataDir, 'pki/ca.crt')) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('delete alone is not enough; with unsafe-delete-ignore-read-errors the corrupt object goes', async () => {
  const path = '/api/v1/namespaces/default/secrets/broken';
  // the option as a query parameter: this HTTPS client sends DELETE bodies without a length
  const unsafe = `${path}?ignoreStoreReadErrorWithClusterBreakingPotential=true`;
  assert.equal(
    (await as('root-token', 'POST', `/apis/${G}/v1/namespaces/default/roles`, role('deleter', ['delete']))).status,
    201,
  );
  assert.equal(
    (await as('root-token', 'POST', `/apis/${G}/v1/namespaces/default/rolebindings`, binding('bob-deleter', 'deleter')))
      .status,
    201,
  );
  assert.equal((await as('bob-token', 'DELETE', path)).status, 500, 'a normal delete reads the object');
  const denied = await as('bob-token', 'DELETE', unsafe);
  assert.equal(denied.status, 403, denied.text);
  assert.match(
    denied.json.message,
    /^secrets "broken" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: /,
  );
  assert.equal(
    (
      await as(
        'root-token',
        'PUT',
        `/apis/${G}/v1/namespaces/default/roles/deleter`,
        role('deleter', ['delete', 'unsafe-delete-ignore-read-errors']),
      )
    ).status,
    200,
  );
  const ok = await as('bob-token', 'DELETE', unsafe);
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await as('root-token', 'GET', path)).status, 404);
});
