/**
 * CertificateApproval and CertificateSigning admission over HTTPS with RBAC: approving needs
 * `approve` on `signers` named after the signer (or `<domain>/*`), changing the certificate or
 * conditions through /status needs `sign`; the refusals are upstream's 403s.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { CSR_PATH, csrObject, makeRequest } from '../helpers/csr.js';
import { grant } from './helpers.js';

const G = 'certificates.plat.io';
const CLIENT = 'platform.io/kube-apiserver-client';
let s: TokenServer;
let tls: TlsClient;
let dir: string;
const as = (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${token}`, ...headers });

const CSR_RULES = [
  { apiGroups: [G], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: [G],
    resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'],
    verbs: ['update', 'patch'],
  },
];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'signer-adm-'));
  s = await startTokenServer(
    [
      'bob-token,bob,uid-b,csr-editors',
      'ann-token,ann,uid-a,"csr-editors,approvers"',
      'dom-token,dom,uid-d,"csr-editors,domain-approvers"',
      'sig-token,sig,uid-s,"csr-editors,signers"',
      '',
    ].join('\n'),
  );
  tls = s.tls;
  await grant(s.url, 'csr-editors', CSR_RULES, ['csr-editors']);
  await grant(
    s.url,
    'approvers',
    [{ apiGroups: [G], resources: ['signers'], resourceNames: [CLIENT], verbs: ['approve'] }],
    ['approvers'],
  );
  await grant(
    s.url,
    'domain-approvers',
    [{ apiGroups: [G], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }],
    ['domain-approvers'],
  );
  await grant(
    s.url,
    'signers',
    [{ apiGroups: [G], resources: ['signers'], resourceNames: ['example.com/custom'], verbs: ['sign'] }],
    ['signers'],
  );
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function csr(name: string, signer: string): Promise<any> {
  const r = await plain(
    s.url,
    'POST',
    CSR_PATH(),
    csrObject(name, makeRequest(dir, name, `/CN=${name}`), signer, ['client auth']),
  );
  assert.equal(r.status, 201, r.text);
  return r.json;
}
const withCondition = (obj: any, type: string) => ({
  ...obj,
  status: { conditions: [{ type, status: 'True', reason: 'R' }] },
});

test('approval needs approve on the signer', async () => {
  const obj = await csr('a1', CLIENT);
  const refused = await as('bob-token', 'PUT', `${CSR_PATH()}/a1/approval`, withCondition(obj, 'Approved'));
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.reason, 'Forbidden');
  assert.equal(
    refused.json.message,
    `certificatesigningrequests.${G} "a1" is forbidden: user not permitted to approve requests with signerName "${CLIENT}"`,
  );
  assert.deepEqual(refused.json.details, { name: 'a1', group: G, kind: 'certificatesigningrequests' });
  const denyAlso = await as(
    'bob-token',
    'PATCH',
    `${CSR_PATH()}/a1/approval`,
    { status: { conditions: [{ type: 'Denied', status: 'True' }] } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(denyAlso.status, 403, 'denying is approving too');
  const ok = await as('ann-token', 'PUT', `${CSR_PATH()}/a1/approval`, withCondition(obj, 'Approved'));
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.status.conditions[0].type, 'Approved');
  const missing = await as(
    'bob-token',
    'PUT',
    `${CSR_PATH()}/nope/approval`,
    withCondition({ ...obj, metadata: { name: 'nope' } }, 'Approved'),
  );
  assert.equal(missing.status, 404, "a missing object is the handler's 404");
});

test('a domain wildcard grants every signer of the domain, and only it', async () => {
  const custom = await csr('d1', 'example.com/custom');
  assert.equal(
    (await as('dom-token', 'PUT', `${CSR_PATH()}/d1/approval`, withCondition(custom, 'Approved'))).status,
    200,
  );
  const client = await csr('d2', CLIENT);
  assert.equal(
    (await as('dom-token', 'PUT', `${CSR_PATH()}/d2/approval`, withCondition(client, 'Approved'))).status,
    403,
  );
});

test('status changes of certificate or conditions need sign; a no-op status write does not', async () => {
  const obj = await csr('s1', 'example.com/custom');
  const approved = (await plain(s.url, 'PUT', `${CSR_PATH()}/s1/approval`, withCondition(obj, 'Approved'))).json;
  const failed = {
    ...approved,
    status: { conditions: [...approved.status.conditions, { type: 'Failed', status: 'True', reason: 'Nope' }] },
  };
  const refused = await as('bob-token', 'PUT', `${CSR_PATH()}/s1/status`, failed);
  assert.equal(refused.status, 403, refused.text);
  assert.equal(
    refused.json.message,
    `certificatesigningrequests.${G} "s1" is forbidden: user not permitted to sign requests with signerName "example.com/custom"`,
  );
  const noop = await as('bob-token', 'PUT', `${CSR_PATH()}/s1/status`, approved);
  assert.equal(noop.status, 200, noop.text);
  const cert = Buffer.from(readFileSync(`${s.dataDir}/pki/ca.crt`)).toString('base64');
  const patched = await as(
    'bob-token',
    'PATCH',
    `${CSR_PATH()}/s1/status`,
    { status: { certificate: cert } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 403, 'a patch is previewed too');
  const signed = await as(
    'sig-token',
    'PATCH',
    `${CSR_PATH()}/s1/status`,
    { status: { certificate: cert } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(signed.status, 200, signed.text);
  assert.equal(signed.json.status.certificate, cert);
});
