/** Certificate issuing (src/x509/issue.ts): checked against the openssl CLI. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate, validity } from '../../src/x509/issue.js';
import { parseCSR } from '../../src/x509/request.js';
import { makeRequest } from '../helpers/csr.js';

const openssl = (args: string[]) =>
  execFileSync('/usr/bin/openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('issued certificates verify with openssl, carry the usages and never are a CA', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'x509-'));
  try {
    for (const [kind, keyArgs] of [
      ['ec', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp384r1']],
      ['rsa', ['-newkey', 'rsa:2048']],
      ['ed25519', ['-newkey', 'ed25519']],
    ] as const) {
      openssl([
        'req',
        '-x509',
        ...keyArgs,
        '-nodes',
        '-keyout',
        join(dir, `${kind}.key`),
        '-out',
        join(dir, `${kind}.crt`),
        '-days',
        '2',
        '-subj',
        `/CN=${kind}-ca`,
      ]);
      const ca = {
        cert: new X509Certificate(readFileSync(join(dir, `${kind}.crt`))),
        key: createPrivateKey(readFileSync(join(dir, `${kind}.key`))),
      };
      const csr = parseCSR(makeRequest(dir, `leaf-${kind}`, '/CN=leaf/O=g', { san: 'DNS:leaf.example' }));
      const pem = await issueCertificate(
        csr,
        ['digital signature', 'key encipherment', 'client auth', 'server auth'],
        ca,
        3600_000,
      );
      writeFileSync(join(dir, `leaf-${kind}.crt`), pem);
      assert.match(
        openssl(['verify', '-CAfile', join(dir, `${kind}.crt`), join(dir, `leaf-${kind}.crt`)]),
        /: OK/,
        kind,
      );
      const text = openssl(['x509', '-in', join(dir, `leaf-${kind}.crt`), '-noout', '-text']);
      assert.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment/, kind);
      assert.match(text, /TLS Web Server Authentication, TLS Web Client Authentication/, kind);
      assert.match(text, /Basic Constraints: critical\s+CA:FALSE/, kind);
      assert.match(text, /DNS:leaf\.example/, kind);
      // the subject re-encoded as Go's ToRDNSequence: O before CN
      assert.equal(new X509Certificate(pem).subject, 'O=g\nCN=leaf');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('validity: notBefore 5 minutes back; the end backdated only from 8h on; capped by the CA', () => {
  const now = Date.UTC(2030, 0, 1, 12, 0, 0);
  const short = validity(now, 3_600_000, now + 1e10);
  assert.deepEqual([short.notBefore.getTime(), short.notAfter.getTime()], [now - 300_000, now + 3_600_000]);
  const long = validity(now, 24 * 3_600_000, now + 1e10);
  assert.deepEqual(
    [long.notBefore.getTime(), long.notAfter.getTime()],
    [now - 300_000, now + 24 * 3_600_000 - 300_000],
  );
  assert.equal(
    validity(now, 8 * 3_600_000, now + 1e10).notAfter.getTime(),
    now + 8 * 3_600_000 - 300_000,
    '8h is not short',
  );
  assert.equal(validity(now, 24 * 3_600_000, now + 60_000).notAfter.getTime(), now + 60_000);
  assert.throws(
    () => validity(now, 3_600_000, now - 600_000),
    /^Error: the signer has expired: NotAfter=2030-01-01T11:50:00.000Z$/,
  );
  assert.throws(
    () => validity(now, 3_600_000, now - 60_000),
    /refusing to sign a certificate that expired in the past/,
  );
});
