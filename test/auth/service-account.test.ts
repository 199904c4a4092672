import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { jwksDocument, keyId, openidConfiguration, parsePublicKeys, type SigningKey } from '../../src/auth/sa-keys.js';
import { ServiceAccountTokens, type ServiceAccountConfig } from '../../src/auth/service-account.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (k: any, type: 'pkcs1' | 'pkcs8' | 'spki' | 'sec1') => k.export({ type, format: 'pem' }) as string;

const signing = (k: typeof rsa.privateKey, alg: string): SigningKey => ({
  kid: keyId(createPublicKey(k)),
  alg,
  key: k,
});
const ISS = 'https://issuer.test';

function tokens(over: Partial<ServiceAccountConfig> = {}, clock = { t: 1_700_000_000_000 }) {
  const cfg: ServiceAccountConfig = {
    issuers: [ISS],
    signingKey: signing(ec.privateKey, 'ES256'),
    domain: 'plat.io',
    apiAudiences: [ISS],
    verifyKeys: parsePublicKeys(pem(ec.publicKey, 'spki') + pem(rsa.publicKey, 'pkcs1'), 'test'),
    now: () => clock.t,
    ...over,
  };
  return { sa: new ServiceAccountTokens(cfg), cfg, clock };
}
const ref = { namespace: 'ns1', name: 'bot', uid: 'uid-1' };

test('key files: several RSA and ECDSA keys per file, public or private; other blocks skipped', () => {
  const text =
    '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n' +
    pem(ec.privateKey, 'sec1') +
    pem(rsa.privateKey, 'pkcs1') +
    pem(other.publicKey, 'spki');
  const keys = parsePublicKeys(text, 'f');
  assert.deepEqual(
    keys.map((k) => k.alg),
    ['ES256', 'RS256', 'ES256'],
  );
  assert.equal(keys[0]!.kid, keyId(ec.publicKey));
  assert.throws(
    () => parsePublicKeys('nothing here', 'f.pem'),
    /f.pem: data does not contain any valid RSA or ECDSA public keys/,
  );
});

test('issued token authenticates as the service account, with audiences and credential id', async () => {
  const { sa, cfg } = tokens();
  const { token, expiresAt } = await sa.issue(ref, [ISS, 'extra'], 3600);
  assert.equal(expiresAt.getTime(), 1_700_000_000_000 + 3600_000);
  const r: any = await sa.authenticator().authenticateToken(token, cfg.apiAudiences);
  assert.equal(r.kind, 'user');
  assert.equal(r.user.username, 'system:serviceaccount:ns1:bot');
  assert.equal(r.user.uid, 'uid-1');
  assert.deepEqual(r.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1']);
  assert.match(r.user.extra['authentication.plat.io/credential-id'][0], /^JTI=/);
  assert.deepEqual(r.audiences, [ISS]);
  const again = sa.authenticator().authenticateToken(token, cfg.apiAudiences);
  assert.ok(!(again instanceof Promise), 'a verified token is answered from memory');
  assert.deepEqual(((await sa.authenticator().authenticateToken(token, ['extra'])) as any).audiences, ['extra']);
  assert.equal((await sa.authenticator().authenticateToken(token, ['nobody'])).kind, 'error');
});

test('foreign, expired, mis-signed and revoked tokens', async () => {
  const { sa, clock } = tokens();
  const auth = sa.authenticator();
  assert.deepEqual(auth.authenticateToken('not-a-jwt', [ISS]), { kind: 'notMine' });
  const foreign = tokens({ issuers: ['https://elsewhere'] }).sa;
  assert.deepEqual(auth.authenticateToken((await foreign.issue(ref, [ISS], 600)).token, [ISS]), { kind: 'notMine' });
  const forged = tokens({ signingKey: { ...signing(other.privateKey, 'ES256'), kid: keyId(ec.publicKey) } }).sa;
  const bad: any = await auth.authenticateToken((await forged.issue(ref, [ISS], 600)).token, [ISS]);
  assert.equal(bad.kind, 'error');
  const { token } = await sa.issue(ref, [ISS], 600);
  clock.t += 601_000;
  const expired: any = await auth.authenticateToken(token, [ISS]);
  assert.equal(expired.kind, 'error');
  assert.match(expired.reason, /exp/);

  let stored: { uid: string } | undefined = { uid: 'uid-1' };
  const withLookup = tokens({ lookup: async () => stored }).sa;
  const t1 = (await withLookup.issue(ref, [ISS], 600)).token;
  const t2 = (await withLookup.issue(ref, [ISS], 600)).token;
  stored = { uid: 'recreated' };
  assert.match(((await withLookup.authenticator().authenticateToken(t1, [ISS])) as any).reason, /does not match claim/);
  stored = undefined;
  assert.match(
    ((await withLookup.authenticator().authenticateToken(t2, [ISS])) as any).reason,
    /ns1\/bot has been deleted/,
  );
});

test('RSA signing and the discovery documents', async () => {
  const { sa, cfg } = tokens({ signingKey: signing(rsa.privateKey, 'RS256') });
  const { token } = await sa.issue(ref, [ISS], 600);
  assert.equal((await sa.authenticator().authenticateToken(token, [ISS])).kind, 'user');
  const jwks = await jwksDocument(cfg.verifyKeys);
  assert.deepEqual(
    jwks.keys.map((k) => [k.kty, k.alg, k.use, k.kid]),
    [
      ['EC', 'ES256', 'sig', keyId(ec.publicKey)],
      ['RSA', 'RS256', 'sig', keyId(rsa.publicKey)],
    ],
  );
  assert.ok(
    jwks.keys.every((k) => !('d' in k)),
    'public keys only',
  );
  assert.deepEqual(openidConfiguration(ISS, `${ISS}/openid/v1/jwks`, cfg.verifyKeys), {
    issuer: ISS,
    jwks_uri: `${ISS}/openid/v1/jwks`,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256', 'RS256'],
  });
});
