/** Encryption providers: round trips, prefixes, key rotation, identity, failures, config validation. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Transformers } from '../../../src/storage/encryption/transformer.js';
import { parseEncryptionConfig, type EncryptionConfig } from '../../../src/storage/encryption/config.js';
import { poly1305, secretboxOpen, secretboxSeal } from '../../../src/storage/encryption/secretbox.js';

const KEY = '/secrets/ns/s1';
const JSON_VALUE = JSON.stringify({
  kind: 'Secret',
  apiVersion: 'v1',
  metadata: { name: 's1' },
  data: { k: 'c2VjcmV0IMOkw7bDvA==' },
  note: 'ünïcödé',
});
const b64 = (n: number, fill = 1) => Buffer.alloc(n, fill).toString('base64');
const fail = (p: string): never => {
  throw new Error(p);
};
const config = (providers: object[], resources = ['secrets']): EncryptionConfig =>
  parseEncryptionConfig(
    {
      apiVersion: 'apiserver.config.plat.io/v1',
      kind: 'EncryptionConfiguration',
      resources: [{ resources, providers }],
    },
    'plat.io',
    fail,
  );

test('each provider writes its prefix, hides the plaintext and reads back exactly', () => {
  for (const [type, size] of [
    ['aescbc', 32],
    ['aescbc', 16],
    ['aesgcm', 32],
    ['aesgcm', 24],
    ['secretbox', 32],
  ] as const) {
    const t = new Transformers(config([{ [type]: { keys: [{ name: 'key1', secret: b64(size) }] } }])).forKey(KEY);
    const stored = t.write(KEY, JSON_VALUE);
    assert.ok(stored.startsWith(`plat:enc:${type}:v1:key1:`), `${type}: ${stored.slice(0, 40)}`);
    assert.ok(!stored.includes('Secret') && !stored.includes('c2VjcmV0'), `${type} hides the value`);
    assert.notEqual(t.write(KEY, JSON_VALUE), stored, `${type}: a fresh nonce per write`);
    assert.equal(t.read(KEY, stored), JSON_VALUE, type);
  }
});

test('first provider writes, all read: key rotation and identity', () => {
  const oldKey = { aescbc: { keys: [{ name: 'old', secret: b64(32, 7) }] } };
  const before = new Transformers(config([oldKey, { identity: {} }])).forKey(KEY);
  const written = before.write(KEY, JSON_VALUE);
  const after = new Transformers(
    config([{ aesgcm: { keys: [{ name: 'new', secret: b64(32, 9) }] } }, oldKey, { identity: {} }]),
  ).forKey(KEY);
  assert.equal(after.read(KEY, written), JSON_VALUE, 'the old key still reads');
  assert.equal(after.read(KEY, JSON_VALUE), JSON_VALUE, 'identity reads plaintext');
  assert.ok(after.write(KEY, JSON_VALUE).startsWith('plat:enc:aesgcm:v1:new:'));
  const identityFirst = new Transformers(config([{ identity: {} }, oldKey])).forKey(KEY);
  assert.equal(identityFirst.write(KEY, JSON_VALUE), JSON_VALUE, 'identity first: stored as is');
  assert.equal(identityFirst.read(KEY, written), JSON_VALUE);
});

test('unreadable values fail with the cause; other resources are untouched', () => {
  const ts = new Transformers(config([{ aesgcm: { keys: [{ name: 'k', secret: b64(32) }] } }]));
  const t = ts.forKey(KEY);
  const stored = t.write(KEY, JSON_VALUE);
  assert.throws(
    () => t.read('/secrets/ns/other', stored),
    { message: 'cipher: message authentication failed' },
    'bound to its key',
  );
  assert.throws(
    () => t.read(KEY, JSON_VALUE),
    { message: 'no matching prefix found' },
    'no identity: plaintext is unreadable',
  );
  const wrong = new Transformers(config([{ aesgcm: { keys: [{ name: 'k', secret: b64(32, 2) }] } }])).forKey(KEY);
  assert.throws(() => wrong.read(KEY, stored), /message authentication failed/);
  const cbc = new Transformers(config([{ aescbc: { keys: [{ name: 'k', secret: b64(32) }] } }])).forKey(KEY);
  assert.throws(() => cbc.read(KEY, 'plat:enc:aescbc:v1:k:' + 'x'.repeat(20)), /shorter than the required size/);
  assert.equal(ts.forKey('/configmaps/ns/c').write('/configmaps/ns/c', JSON_VALUE), JSON_VALUE);
});

test('resource names: exact, group wildcard, *.*; the first matching entry wins', () => {
  const aes = { aescbc: { keys: [{ name: 'k', secret: b64(32) }] } };
  const doc = {
    apiVersion: 'apiserver.config.plat.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      { resources: ['configmaps'], providers: [{ identity: {} }] },
      { resources: ['*.apps', 'leases.coordination.plat.io'], providers: [aes] },
      { resources: ['*.*'], providers: [{ secretbox: { keys: [{ name: 's', secret: b64(32) }] } }] },
    ],
  };
  const ts = new Transformers(parseEncryptionConfig(doc, 'plat.io', fail));
  const stored = (k: string) => ts.forKey(k).write(k, '{}');
  assert.equal(stored('/configmaps/a/b'), '{}');
  assert.ok(stored('apps/deployments/a/b').startsWith('plat:enc:aescbc:v1:k:'));
  assert.ok(stored('coordination.plat.io/leases/a/b').startsWith('plat:enc:aescbc:v1:k:'));
  assert.ok(stored('/secrets/a/b').startsWith('plat:enc:secretbox:v1:s:'));
});

test('invalid configurations are refused with field paths', () => {
  assert.throws(
    () => config([{ aescbc: { keys: [{ name: 'k', secret: b64(10) }] } }]),
    /resources\[0\]\.providers\[0\]\.aescbc\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 10/,
  );
  assert.throws(() => config([{ secretbox: { keys: [{ name: 'k', secret: b64(16) }] } }]), /expected one of \[32\]/);
  assert.throws(() => config([{ kms: {} }]), /Unsupported value: "kms"/);
  assert.throws(() => config([{ aescbc: { keys: [] } }]), /keys \(list\) is required/);
  assert.throws(
    () => config([{ identity: {}, aescbc: { keys: [] } }]),
    /more than one provider specified in a single element/,
  );
  assert.throws(
    () => parseEncryptionConfig({ apiVersion: 'v1', kind: 'EncryptionConfiguration', resources: [] }, 'plat.io', fail),
    /apiVersion must be apiserver\.config\.plat\.io\/v1/,
  );
});

test('secretbox matches NaCl (test vector of the NaCl distribution) and Poly1305 matches RFC 8439', () => {
  const h = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
  assert.equal(
    Buffer.from(
      poly1305(
        h('85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b'),
        Buffer.from('Cryptographic Forum Research Group'),
      ),
    ).toString('hex'),
    'a8061dc1305136c6c22b8baf0c0127a9',
  );
  const key = h('1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389');
  const nonce = h('69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37');
  const msg = h(
    'be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705',
  );
  const box = secretboxSeal(msg, nonce, key);
  assert.equal(
    Buffer.from(box).toString('hex'),
    'f3ffc7703f9400e52a7dfb4b3d3305d9' +
      '8e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5',
  );
  assert.deepEqual(secretboxOpen(box, nonce, key), msg);
  box[20]! ^= 1;
  assert.equal(secretboxOpen(box, nonce, key), undefined);
});
