/**
 * kubectl v1.32 `certificate approve` / `certificate deny` against the server under the
 * upstream API domain (kubectl's typed client only knows certificates.k8s.io), the built-in
 * signer issuing from the CA given by --cluster-signing-*-file, and the issued certificate
 * then authenticating with kubectl on the secure port (that CA is also --client-ca-file).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, startAuthServer, type AuthServer } from '../auth/helpers.js';
import { kubectlRunner } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';
import { CSR_PATH, makeRequest } from '../helpers/csr.js';
import { until } from '../helpers/poll.js';

const G = 'certificates.k8s.io';
let pki: Pki;
let s: AuthServer;
const { kubectl, ok } = kubectlRunner(
  () => s.url,
  () => pki.dir,
  60_000,
);

before(async () => {
  pki = new Pki().ca('cluster');
  s = await startAuthServer([
    '--api-domain',
    'k8s.io',
    '--cluster-signing-cert-file',
    pki.path('cluster.crt'),
    '--cluster-signing-key-file',
    pki.path('cluster.key'),
    '--client-ca-file',
    pki.path('cluster.crt'),
  ]);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

/** Creates the CSR with kubectl (its client-side validation reads the OpenAPI v3 document of certificates.k8s.io). */
async function createCsr(
  name: string,
  subject: string,
  signer = 'kubernetes.io/kube-apiserver-client',
  usages = ['client auth'],
): Promise<void> {
  const pem = makeRequest(pki.dir, name, subject);
  writeFileSync(
    pki.path(`${name}.yaml`),
    [
      `apiVersion: ${G}/v1`,
      'kind: CertificateSigningRequest',
      'metadata:',
      `  name: ${name}`,
      'spec:',
      `  request: ${Buffer.from(pem).toString('base64')}`,
      `  signerName: ${signer}`,
      '  expirationSeconds: 3600',
      `  usages: [${usages.join(', ')}]`,
      '',
    ].join('\n'),
  );
  assert.match(
    await ok('create', '-f', pki.path(`${name}.yaml`)),
    new RegExp(`certificatesigningrequest.${G}/${name} created`),
  );
}

const getCsr = async (name: string) => (await request(s.url, 'GET', `${CSR_PATH(G)}/${name}`)).json;

// The tests below are steps of one scenario, as upstream's test/cmd functions are: run them in order
// (the file runs alone; a single step alone has nothing to work on).
describe('a certificate through kubectl, a scenario in order (each step uses the CSR of the steps before it)', () => {
  test('kubectl certificate approve: Approved by kubectl, then issued', async () => {
    await createCsr('alice', '/CN=alice/O=dev/O=ops');
    assert.match(
      await ok('certificate', 'approve', 'alice'),
      new RegExp(`certificatesigningrequest.${G}/alice approved`),
    );
    const csr = await until(async () => {
      const c = await getCsr('alice');
      return c.status?.certificate ? c : undefined;
    }, 'alice issued');
    const approved = csr.status.conditions.find((c: any) => c.type === 'Approved');
    assert.deepEqual(
      [approved.status, approved.reason, approved.message],
      ['True', 'KubectlApprove', 'This CSR was approved by kubectl certificate approve.'],
    );
    assert.ok(approved.lastUpdateTime);
    const cert = new X509Certificate(Buffer.from(csr.status.certificate, 'base64'));
    assert.ok(cert.verify(new X509Certificate(pki.read('cluster.crt')).publicKey));
    const table = await ok('get', 'csr', 'alice');
    assert.match(table, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/m);
    assert.match(
      table,
      /^alice\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+system:unsecured\s+60m\s+Approved,Issued$/m,
    );
    // approving again is accepted and changes nothing
    assert.match(await ok('certificate', 'approve', 'alice'), /approved/);
  });

  test('kubectl certificate deny: Denied, never issued, and approve then refuses', async () => {
    await createCsr('mallory', '/CN=mallory');
    assert.match(
      await ok('certificate', 'deny', 'mallory'),
      new RegExp(`certificatesigningrequest.${G}/mallory denied`),
    );
    const csr = await getCsr('mallory');
    const denied = csr.status.conditions.find((c: any) => c.type === 'Denied');
    assert.deepEqual(
      [denied.reason, denied.message],
      ['KubectlDeny', 'This CSR was denied by kubectl certificate deny.'],
    );
    const r = await kubectl('certificate', 'approve', 'mallory');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /certificate signing request "mallory" is already Denied/);
    // a client ignoring that is refused by the server: Approved and Denied exclude each other
    csr.status.conditions.push({ type: 'Approved', status: 'True' });
    const forced = await request(s.url, 'PUT', `${CSR_PATH(G)}/mallory/approval`, csr);
    assert.equal(forced.status, 422, forced.text);
    assert.match(await ok('get', 'csr', 'mallory'), /^mallory\s.*\sDenied$/m);
    assert.equal((await getCsr('mallory')).status.certificate, undefined);
  });

  test('a kubelet-signer request with another subject is approved but Failed', async () => {
    await createCsr('not-a-node', '/O=system:nodes/CN=alice', 'kubernetes.io/kube-apiserver-client-kubelet', [
      'digital signature',
      'client auth',
    ]);
    await ok('certificate', 'approve', 'not-a-node');
    const csr = await until(async () => {
      const c = await getCsr('not-a-node');
      return c.status?.conditions?.some((x: any) => x.type === 'Failed') ? c : undefined;
    }, 'Failed');
    assert.equal(csr.status.conditions.at(-1).message, 'subject common name does not begin with system:node:');
    assert.match(await ok('get', 'csr', 'not-a-node'), /Approved,Failed$/m);
  });

  test('the issued certificate authenticates with kubectl on the secure port', async () => {
    const csr = await getCsr('alice');
    writeFileSync(pki.path('alice.crt'), Buffer.from(csr.status.certificate, 'base64'));
    const serving = readFileSync(`${s.dataDir}/pki/ca.crt`).toString('base64');
    writeFileSync(
      pki.path('alice.kubeconfig'),
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: c',
        '  cluster:',
        `    server: ${s.secureUrl}`,
        `    certificate-authority-data: ${serving}`,
        'users:',
        '- name: alice',
        '  user:',
        `    client-certificate: ${pki.path('alice.crt')}`,
        `    client-key: ${pki.path('alice.key')}`,
        'contexts:',
        '- name: alice',
        '  context: {cluster: c, user: alice}',
        'current-context: alice',
        '',
      ].join('\n'),
    );
    const who = await kubectl(
      '--kubeconfig',
      pki.path('alice.kubeconfig'),
      '--server',
      s.secureUrl,
      'auth',
      'whoami',
      '-o',
      'json',
    );
    assert.equal(who.code, 0, who.stderr);
    const review = JSON.parse(who.stdout);
    assert.equal(review.status.userInfo.username, 'alice');
    assert.deepEqual(review.status.userInfo.groups, ['dev', 'ops', 'system:authenticated']);
    // RBAC still applies: alice has no grants
    const denied = await kubectl('--kubeconfig', pki.path('alice.kubeconfig'), '--server', s.secureUrl, 'get', 'ns');
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /User "alice" cannot list resource "namespaces"/);
  });
});
