/**
 * The built-in CSR signer end to end against a real server: openssl makes a key and request,
 * the CSR object is created and approved, and the issued certificate verifies against the
 * cluster CA with the requested subject, usages and lifetime. Denied requests are never signed;
 * requests breaking a signer's restrictions get Failed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { CSR_PATH, csrObject, decide, makeRequest, settled } from '../helpers/csr.js';
import { startupError } from '../auth/helpers.js';

const CLIENT = 'platform.io/kube-apiserver-client';
const KUBELET = 'platform.io/kube-apiserver-client-kubelet';
let s: TestServer;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'csr-signer-'));
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** decision 'none': left to the approving controller */
async function createAndDecide(
  name: string,
  subject: string,
  signer: string,
  usages: string[],
  decision: 'Approved' | 'Denied' | 'none' = 'Approved',
  extra = {},
  opts = {},
) {
  const pem = makeRequest(dir, name, subject, opts);
  const c = await request(s.url, 'POST', CSR_PATH(), csrObject(name, pem, signer, usages, extra));
  assert.equal(c.status, 201, c.text);
  if (decision === 'none') return c.json;
  const a = await decide(s.url, name, decision);
  assert.equal(a.status, 200, a.text);
  return a.json;
}

const certOf = (csr: any) => new X509Certificate(Buffer.from(csr.status.certificate, 'base64'));
const clusterCA = () => new X509Certificate(readFileSync(join(s.dataDir, 'pki', 'ca.crt')));

test('an approved client CSR gets a certificate from the cluster CA', async () => {
  const approved = await createAndDecide(
    'alice',
    '/CN=alice/O=dev/O=ops',
    CLIENT,
    ['digital signature', 'client auth'],
    'Approved',
    { expirationSeconds: 3600 },
  );
  assert.equal(approved.status.conditions[0].type, 'Approved');
  assert.ok(approved.status.conditions[0].lastUpdateTime, 'lastUpdateTime defaulted');
  const csr = await settled(s.url, 'alice');
  assert.ok(csr.status.certificate, JSON.stringify(csr.status));
  const cert = certOf(csr);
  const ca = clusterCA();
  assert.ok(cert.verify(ca.publicKey), 'signed by the cluster CA');
  assert.ok(cert.checkIssued(ca));
  // re-encoded as Go's ToRDNSequence: the Os in one RDN before the CN
  assert.equal(cert.subject, 'O=dev + O=ops\nCN=alice');
  assert.equal(cert.ca, false);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'client auth');
  const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
  assert.equal(lifetime, 3600_000 + 300_000, 'expirationSeconds honoured; notBefore backdated 5 minutes');
  assert.ok(Date.parse(cert.validFrom) <= Date.now() && Date.parse(cert.validTo) > Date.now());
  assert.ok(
    cert.publicKey.equals(
      new X509Certificate(
        execFileSync('/usr/bin/openssl', [
          'req',
          '-in',
          join(dir, 'alice.csr'),
          '-x509',
          '-key',
          join(dir, 'alice.key'),
          '-days',
          '1',
        ]),
      ).publicKey,
    ),
    'the request key',
  );
  assert.equal(csr.status.conditions.length, 1, 'no Failed condition');
  // the certificate is set once: a second status write cannot replace it
  const again = await request(s.url, 'PUT', `${CSR_PATH()}/alice/status`, {
    ...csr,
    status: {
      ...csr.status,
      certificate: Buffer.from(readFileSync(join(s.dataDir, 'pki', 'ca.crt'))).toString('base64'),
    },
  });
  assert.equal(again.status, 422, again.text);
  assert.equal(again.json.details.causes[0].field, 'status.certificate');
});

test('a denied CSR never gets a certificate', async () => {
  await createAndDecide('denied', '/CN=mallory', CLIENT, ['client auth'], 'Denied');
  // a request approved afterwards is signed; by then the denied one has been seen too
  await createAndDecide('after-denied', '/CN=bob', CLIENT, ['client auth']);
  assert.ok((await settled(s.url, 'after-denied')).status.certificate);
  const denied = (await request(s.url, 'GET', `${CSR_PATH()}/denied`)).json;
  assert.equal(denied.status.certificate, undefined);
  assert.deepEqual(
    denied.status.conditions.map((c: any) => c.type),
    ['Denied'],
  );
  // and it cannot be approved any more
  const flip = await decide(s.url, 'denied', 'Approved');
  assert.equal(flip.status, 422, flip.text);
  assert.equal(flip.json.details.causes[0].reason, 'FieldValueInvalid');
  assert.match(flip.json.details.causes[0].message, /Approved and Denied conditions are mutually exclusive/);
});

test('the kubelet client signer: the node subject is signed, another subject gets Failed', async () => {
  // a valid node client request by system:masters (the plain port) is approved by the approving controller
  await createAndDecide(
    'node-ok',
    '/O=system:nodes/CN=system:node:n1',
    KUBELET,
    ['digital signature', 'client auth'],
    'none',
  );
  const ok = await settled(s.url, 'node-ok');
  assert.ok(ok.status.certificate, JSON.stringify(ok.status));
  assert.deepEqual(
    ok.status.conditions.map((c: any) => [c.type, c.reason]),
    [['Approved', 'AutoApproved']],
  );
  assert.equal(certOf(ok).subject, 'O=system:nodes\nCN=system:node:n1');
  const cases: [string, string, string[], string, object?][] = [
    [
      'node-wrong-cn',
      '/O=system:nodes/CN=alice',
      ['digital signature', 'client auth'],
      'subject common name does not begin with system:node:',
    ],
    [
      'node-wrong-o',
      '/O=dev/CN=system:node:n1',
      ['digital signature', 'client auth'],
      'subject organization is not system:nodes',
    ],
    [
      'node-usages',
      '/O=system:nodes/CN=system:node:n1',
      ['client auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    [
      'node-san',
      '/O=system:nodes/CN=system:node:n1',
      ['digital signature', 'client auth'],
      'DNS subjectAltNames are not allowed',
      { san: 'DNS:n1.example' },
    ],
  ];
  for (const [name, subject, usages, message, opts] of cases) {
    await createAndDecide(name, subject, KUBELET, usages, 'Approved', {}, opts);
    const csr = await settled(s.url, name);
    assert.equal(csr.status.certificate, undefined, name);
    const failed = csr.status.conditions.find((c: any) => c.type === 'Failed');
    assert.deepEqual(
      [failed.status, failed.reason, failed.message],
      ['True', 'SignerValidationFailure', message],
      name,
    );
    assert.ok(failed.lastUpdateTime, name);
  }
});

test('the client signer refuses other usages with Failed and system:masters at create', async () => {
  await createAndDecide('server-usage', '/CN=web', CLIENT, ['client auth', 'server auth']);
  const csr = await settled(s.url, 'server-usage');
  assert.equal(csr.status.conditions.at(-1).message, 'invalid usage for client certificate: server auth');
  await createAndDecide('no-client-auth', '/CN=web', CLIENT, ['digital signature']);
  assert.equal(
    (await settled(s.url, 'no-client-auth')).status.conditions.at(-1).message,
    'missing required usage for client certificate: client auth',
  );
  const pem = makeRequest(dir, 'root', '/CN=root/O=system:masters');
  const c = await request(s.url, 'POST', CSR_PATH(), csrObject('root', pem, CLIENT, ['client auth']));
  assert.equal(c.status, 403, c.text);
  assert.equal(c.json.reason, 'Forbidden');
  assert.equal(
    c.json.message,
    'certificatesigningrequests.certificates.plat.io "root" is forbidden: use of platform.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
});

test('other signers are left alone; RSA requests are signed too', async () => {
  await createAndDecide('custom', '/CN=x', 'example.com/custom', ['client auth']);
  await createAndDecide(
    'rsa',
    '/CN=carol',
    CLIENT,
    ['digital signature', 'key encipherment', 'client auth'],
    'Approved',
    {},
    { rsa: true },
  );
  const rsa = await settled(s.url, 'rsa');
  assert.ok(certOf(rsa).verify(clusterCA().publicKey));
  const custom = (await request(s.url, 'GET', `${CSR_PATH()}/custom`)).json;
  assert.equal(custom.status.certificate, undefined);
  assert.deepEqual(
    custom.status.conditions.map((c: any) => c.type),
    ['Approved'],
  );
});

test('--cluster-signing-cert-file/-key-file and --cluster-signing-duration', async () => {
  const own = mkdtempSync(join(tmpdir(), 'csr-ca-'));
  execFileSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(own, 'ca.key'),
      '-out',
      join(own, 'ca.crt'),
      '-days',
      '30',
      '-subj',
      '/CN=own-ca',
    ],
    { stdio: 'ignore' },
  );
  const t = await startServer([
    '--cluster-signing-cert-file',
    join(own, 'ca.crt'),
    '--cluster-signing-key-file',
    join(own, 'ca.key'),
    '--cluster-signing-duration',
    '2h',
  ]);
  try {
    const pem = makeRequest(dir, 'capped', '/CN=dave');
    assert.equal(
      (
        await request(
          t.url,
          'POST',
          CSR_PATH(),
          csrObject('capped', pem, CLIENT, ['client auth'], { expirationSeconds: 86400 }),
        )
      ).status,
      201,
    );
    assert.equal((await decide(t.url, 'capped', 'Approved')).status, 200);
    const cert = certOf(await settled(t.url, 'capped'));
    assert.ok(cert.verify(new X509Certificate(readFileSync(join(own, 'ca.crt'))).publicKey), 'signed by the given CA');
    assert.equal(cert.issuer, 'CN=own-ca');
    assert.equal(
      Date.parse(cert.validTo) - Date.parse(cert.validFrom),
      2 * 3_600_000 + 300_000,
      'capped by --cluster-signing-duration (plus the backdate)',
    );
    // a key that is not the certificate's is a startup error naming the flags
    execFileSync(
      '/usr/bin/openssl',
      ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', join(own, 'other.key')],
      { stdio: 'ignore' },
    );
    const bad = await startupError([
      '--cluster-signing-cert-file',
      join(own, 'ca.crt'),
      '--cluster-signing-key-file',
      join(own, 'other.key'),
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /--cluster-signing-cert-file\/--cluster-signing-key-file: .*other\.key is not the private key of .*ca\.crt/,
    );
  } finally {
    await t.stop();
    t.cleanup();
    rmSync(own, { recursive: true, force: true });
  }
});

test('the requester is recorded by create and by a server-side apply that creates', async () => {
  const pem = makeRequest(dir, 'applied', '/CN=applied');
  const body = { ...(csrObject('applied', pem, 'example.com/x', ['client auth']) as any) };
  body.spec.username = 'someone-else';
  const r = await request(s.url, 'PATCH', `${CSR_PATH()}/applied?fieldManager=test`, body, {
    'content-type': 'application/apply-patch+yaml',
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.spec.username, 'system:unsecured');
  assert.ok(r.json.spec.groups.includes('system:masters'));
  // a create of this test's own (it runs alone too), its spec.username overwritten as well
  const made = {
    ...(csrObject('created', makeRequest(dir, 'created', '/CN=created'), 'example.com/x', ['client auth']) as any),
  };
  made.spec.username = 'someone-else';
  assert.equal((await request(s.url, 'POST', CSR_PATH(), made)).status, 201);
  const created = (await request(s.url, 'GET', `${CSR_PATH()}/created`)).json;
  assert.equal(created.spec.username, 'system:unsecured');
});
