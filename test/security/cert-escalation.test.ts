/**
 * Certificate escalations over the real secure listener (issue 18, items 1 and 2):
 * - a CSR whose O is `system:masters` as an ASN.1 UniversalString, approved and signed for the
 *   API server client signer, must not authenticate in system:masters (Go leaves the value out
 *   of the request and re-encodes the subject it parsed; OpenSSL would read UTF-32);
 * - a node's CSR `O=system:nodes, CN=system:plat-controller-manager, CN=system:node:n1` is
 *   auto-approved as the node (Go's last CN) and its certificate must authenticate as that same
 *   node, not as the controller manager;
 * - a client certificate of the cluster CA with a UniversalString O is refused at the TLS front
 *   (Go's parser refuses it: the handshake fails), a multi-CN one authenticates as the last CN.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { grant } from '../authz/helpers.js';
import { until } from '../helpers/poll.js';
import { certPem, cn, csrPem, ecKey, keyPem, name, org } from './x509-builders.js';

const CSRS = '/apis/certificates.plat.io/v1/certificatesigningrequests';
const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const SSR_BODY = { apiVersion: 'authentication.plat.io/v1', kind: 'SelfSubjectReview' };

let s: TokenServer;
let ca: Buffer;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

before(async () => {
  s = await startTokenServer('eve-token,eve,uid-eve\nn1-token,system:node:n1,uid-n1,"system:nodes"\n');
  ca = readFileSync(join(s.dataDir, 'pki', 'ca.crt'));
  // eve may request and approve API server client certificates; nodes may renew their own
  await grant(
    s.url,
    'eve-csr',
    [
      { verbs: ['create', 'get'], apiGroups: ['certificates.plat.io'], resources: ['certificatesigningrequests'] },
      { verbs: ['update'], apiGroups: ['certificates.plat.io'], resources: ['certificatesigningrequests/approval'] },
      {
        verbs: ['approve'],
        apiGroups: ['certificates.plat.io'],
        resources: ['signers'],
        resourceNames: ['platform.io/kube-apiserver-client'],
      },
    ],
    ['system:authenticated'],
  );
  await grant(
    s.url,
    'nodes-selfnodeclient',
    [
      { verbs: ['create', 'get'], apiGroups: ['certificates.plat.io'], resources: ['certificatesigningrequests'] },
      {
        verbs: ['create'],
        apiGroups: ['certificates.plat.io'],
        resources: ['certificatesigningrequests/selfnodeclient'],
      },
    ],
    ['system:nodes'],
  );
});
after(async () => {
  await s?.close();
});

const tls = (cert?: string, key?: string): TlsClient => ({
  ca,
  ...(cert ? { cert: Buffer.from(cert), key: Buffer.from(key!) } : {}),
});

async function submit(token: string, csrName: string, pem: string, signerName: string, usages: string[]) {
  const body = {
    apiVersion: 'certificates.plat.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: csrName },
    spec: { request: Buffer.from(pem).toString('base64'), signerName, usages },
  };
  return request(s.secureUrl, tls(), 'POST', CSRS, body, bearer(token));
}

const issued = (token: string, csrName: string): Promise<string> =>
  until(async () => {
    const r = await request(s.secureUrl, tls(), 'GET', `${CSRS}/${csrName}`, undefined, bearer(token));
    const c = r.json?.status?.certificate;
    return c ? Buffer.from(c, 'base64').toString() : undefined;
  }, `${csrName} issued`);

test('a UniversalString O=system:masters: the signed certificate authenticates without system:masters', async () => {
  const key = ecKey();
  const pem = csrPem(name(cn('eve-admin'), org('system:masters', 'UniversalString')), key);
  const created = await submit('eve-token', 'eve-universal', pem, 'platform.io/kube-apiserver-client', ['client auth']);
  assert.equal(created.status, 201, created.text);
  const csr = created.json;
  csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Eve', message: 'self-approved' }] };
  const approved = await request(s.secureUrl, tls(), 'PUT', `${CSRS}/eve-universal/approval`, csr, bearer('eve-token'));
  assert.equal(approved.status, 200, approved.text);
  const cert = await issued('eve-token', 'eve-universal');
  assert.doesNotMatch(new X509Certificate(cert).subject, /masters/, 'the issued subject is the parsed one');
  const who = await request(s.secureUrl, tls(cert, keyPem(key)), 'POST', SSR, SSR_BODY);
  assert.equal(who.status, 201, who.text);
  assert.deepEqual(who.json.status.userInfo, { username: 'eve-admin', groups: ['system:authenticated'] });
  const secrets = await request(s.secureUrl, tls(cert, keyPem(key)), 'GET', '/api/v1/secrets');
  assert.equal(secrets.status, 403, secrets.text);
});

test('system:masters as a BMPString is the system:masters group: the subject restriction refuses it', async () => {
  const pem = csrPem(name(cn('eve-bmp'), org('system:masters', 'BMPString')));
  const r = await submit('eve-token', 'eve-bmp', pem, 'platform.io/kube-apiserver-client', ['client auth']);
  assert.equal(r.status, 403, r.text);
  assert.match(
    r.json.message,
    /use of platform\.io\/kube-apiserver-client signer with system:masters group is not allowed/,
  );
});

test('a node CSR with two CNs is approved for the last and its certificate is that node', async () => {
  const key = ecKey();
  const pem = csrPem(name(org('system:nodes'), cn('system:plat-controller-manager'), cn('system:node:n1')), key);
  const created = await submit('n1-token', 'node-n1-two-cns', pem, 'platform.io/kube-apiserver-client-kubelet', [
    'digital signature',
    'client auth',
  ]);
  assert.equal(created.status, 201, created.text);
  const cert = await issued('n1-token', 'node-n1-two-cns');
  const who = await request(s.secureUrl, tls(cert, keyPem(key)), 'POST', SSR, SSR_BODY);
  assert.equal(who.status, 201, who.text);
  assert.deepEqual(who.json.status.userInfo, {
    username: 'system:node:n1',
    groups: ['system:nodes', 'system:authenticated'],
  });
  assert.doesNotMatch(new X509Certificate(cert).subject, /controller-manager/);
});

test('client certificates of the cluster CA: a UniversalString subject value is refused, several CNs mean the last', async () => {
  const signer = {
    cert: new X509Certificate(ca),
    key: createPrivateKey(readFileSync(join(s.dataDir, 'pki', 'ca.key'))),
  };
  const key = ecKey();
  const universal = certPem(name(cn('mallory'), org('system:masters', 'UniversalString')), signer, key);
  assert.match(
    new X509Certificate(universal).subject,
    /O=system:masters/,
    'OpenSSL reads the UTF-32 value as system:masters',
  );
  await assert.rejects(
    request(s.secureUrl, tls(universal, keyPem(key)), 'POST', SSR, SSR_BODY),
    'no request is served on that connection',
  );
  const twoCns = certPem(
    name(org('system:nodes'), cn('system:plat-controller-manager'), cn('system:node:n2')),
    signer,
    key,
  );
  const who = await request(s.secureUrl, tls(twoCns, keyPem(key)), 'POST', SSR, SSR_BODY);
  assert.equal(who.status, 201, who.text);
  assert.equal(who.json.status.userInfo.username, 'system:node:n2');
});
