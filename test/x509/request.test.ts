/** PKCS#10 request parsing and signature checks (src/x509/request.ts), and malformed input. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkSignature, firstPemBlock, parseCSR, parseRequestDer, PEM_TYPE_ERROR } from '../../src/x509/request.js';
import { makeRequest } from '../helpers/csr.js';
import { ALICE_CSR, tampered } from '../fixtures/csr.js';

test('parseCSR reads subject, SANs and checks the signature', () => {
  const dir = mkdtempSync(join(tmpdir(), 'x509-'));
  try {
    const pem = makeRequest(dir, 'u', '/CN=alice/O=dev/O=ops', {
      san: 'DNS:a.example,IP:10.1.2.3,email:a@example.com,URI:spiffe://x/y',
    });
    const csr = parseCSR(pem);
    assert.equal(csr.subject.commonName, 'alice');
    assert.deepEqual(csr.subject.organization, ['dev', 'ops']);
    assert.deepEqual(
      [csr.dnsNames, csr.ipAddresses, csr.emailAddresses, csr.uris],
      [['a.example'], ['10.1.2.3'], ['a@example.com'], ['spiffe://x/y']],
    );
    assert.equal(checkSignature(csr), undefined);
    assert.equal(checkSignature(parseCSR(makeRequest(dir, 'r', '/CN=r', { rsa: true }))), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(checkSignature(parseCSR(tampered(ALICE_CSR))), 'x509: ECDSA verification failure');
  assert.throws(() => parseCSR('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), {
    message: PEM_TYPE_ERROR,
  });
  assert.throws(() => parseCSR('no pem'), { message: PEM_TYPE_ERROR });
  assert.throws(() => parseCSR('-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQA=\n-----END CERTIFICATE REQUEST-----\n'), {
    message: 'x509: malformed certificate request',
  });
});

// a subject value Go's encoding/asn1 refuses keeps Go's message (asn1: ..., pkcs12: odd-length BMP string)
test("malformed DER never escapes as anything but the malformed-request error or Go's subject value errors", () => {
  const der = firstPemBlock(ALICE_CSR)!.der;
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 2000; i++) {
    const b = Buffer.from(der.subarray(0, i % 3 === 0 ? rand(der.length) : der.length));
    if (i % 3 !== 0) for (let k = 0; k < 1 + rand(4); k++) b[rand(b.length)] = rand(256);
    try {
      const csr = parseRequestDer(b);
      assert.equal(typeof checkSignature(csr) === 'string' || checkSignature(csr) === undefined, true);
    } catch (e) {
      assert.ok(e instanceof Error, String(e));
      assert.match((e as Error).message, /^(x509|asn1|pkcs12): /, `input ${i}`);
    }
  }
});
