/**
 * CertificateSigningRequest helpers for tests: keys and PKCS#10 requests made with the openssl
 * CLI, the CSR object for them, and a bounded poll for the signer's result.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from './server.js';
import { until } from './poll.js';

export const CSR_PATH = (group = 'certificates.plat.io') => `/apis/${group}/v1/certificatesigningrequests`;

/** Writes `<name>.key` and `<name>.csr` (EC P-256 unless rsa) into dir; returns the CSR PEM. */
export function makeRequest(
  dir: string,
  name: string,
  subject: string,
  opts: { rsa?: boolean; san?: string } = {},
): string {
  const key = opts.rsa ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  const args = [
    'req',
    '-new',
    ...key,
    '-nodes',
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.csr`),
    '-subj',
    subject,
  ];
  if (opts.san) args.push('-addext', `subjectAltName=${opts.san}`);
  execFileSync('/usr/bin/openssl', args, { stdio: 'ignore' });
  return readFileSync(join(dir, `${name}.csr`), 'utf8');
}

export function csrObject(
  name: string,
  pem: string,
  signerName: string,
  usages: string[],
  extra: Record<string, unknown> = {},
): object {
  return {
    apiVersion: 'certificates.plat.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(pem).toString('base64'), signerName, usages, ...extra },
  };
}

/** Sets an Approved (or Denied) condition through the approval subresource. */
export async function decide(base: string, name: string, type: 'Approved' | 'Denied', group = 'certificates.plat.io') {
  const got = await request(base, 'GET', `${CSR_PATH(group)}/${name}`);
  assert.equal(got.status, 200, got.text);
  const csr = got.json;
  csr.status = {
    ...csr.status,
    conditions: [
      ...(csr.status?.conditions ?? []),
      { type, status: 'True', reason: 'Test', message: `${type} by the test` },
    ],
  };
  return request(base, 'PUT', `${CSR_PATH(group)}/${name}/approval`, csr);
}

/** Waits until the CSR has a certificate or a Failed condition; returns the object. */
export function settled(base: string, name: string, group = 'certificates.plat.io'): Promise<any> {
  return until(async () => {
    const csr = (await request(base, 'GET', `${CSR_PATH(group)}/${name}`)).json;
    const failed = (csr?.status?.conditions ?? []).some((c: any) => c.type === 'Failed');
    return csr?.status?.certificate || failed ? csr : undefined;
  }, `${name} signed or failed`);
}
