/**
 * The CSR approving controller over HTTPS with RBAC: node client requests are auto-approved
 * when the requester may create certificatesigningrequests/selfnodeclient (its own node name in
 * the CN) or /nodeclient (bootstrap); anyone else's, or anything else, stays pending.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, startTokenServer, type TlsClient, type TokenServer } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { CSR_PATH, csrObject, makeRequest, settled } from '../helpers/csr.js';
import { grant } from '../authz/helpers.js';

const G = 'certificates.plat.io';
const KUBELET = 'platform.io/kube-apiserver-client-kubelet';
const NODE_USAGES = ['digital signature', 'key encipherment', 'client auth'];
let s: TokenServer;
let tls: TlsClient;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'csr-approver-'));
  s = await startTokenServer(
    [
      'n1-token,system:node:n1,uid-n1,system:nodes',
      'boot-token,system:bootstrap:abc123,uid-b,system:bootstrappers',
      'eve-token,eve,uid-e,requesters',
      '',
    ].join('\n'),
  );
  tls = s.tls;
  const create = { apiGroups: [G], resources: ['certificatesigningrequests'], verbs: ['create', 'get'] };
  await grant(s.url, 'requesters', [create], ['system:nodes', 'system:bootstrappers', 'requesters']);
  await grant(
    s.url,
    'selfnodeclient',
    [{ apiGroups: [G], resources: ['certificatesigningrequests/selfnodeclient'], verbs: ['create'] }],
    ['system:nodes'],
  );
  await grant(
    s.url,
    'nodeclient',
    [{ apiGroups: [G], resources: ['certificatesigningrequests/nodeclient'], verbs: ['create'] }],
    ['system:bootstrappers'],
  );
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function submit(token: string, name: string, subject: string, usages = NODE_USAGES): Promise<void> {
  const r = await request(
    s.secureUrl,
    tls,
    'POST',
    CSR_PATH(),
    csrObject(name, makeRequest(dir, name, subject), KUBELET, usages),
    { authorization: `Bearer ${token}` },
  );
  assert.equal(r.status, 201, r.text);
}

test('a node renews its own client certificate (selfnodeclient)', async () => {
  await submit('n1-token', 'renew', '/O=system:nodes/CN=system:node:n1');
  const csr = await settled(s.url, 'renew');
  assert.equal(csr.spec.username, 'system:node:n1');
  const approved = csr.status.conditions[0];
  assert.deepEqual(
    [approved.type, approved.reason, approved.message],
    ['Approved', 'AutoApproved', 'Auto approving self kubelet client certificate after SubjectAccessReview.'],
  );
  assert.ok(csr.status.certificate);
});

test('a bootstrapping node gets its first client certificate (nodeclient)', async () => {
  await submit('boot-token', 'bootstrap', '/O=system:nodes/CN=system:node:n2');
  const csr = await settled(s.url, 'bootstrap');
  assert.equal(
    csr.status.conditions[0].message,
    'Auto approving kubelet client certificate after SubjectAccessReview.',
  );
  assert.ok(csr.status.certificate);
});

test('requests stay pending without the permission, for another node, or when not a node client request', async () => {
  await submit('eve-token', 'eve', '/O=system:nodes/CN=system:node:n3');
  await submit('n1-token', 'other-node', '/O=system:nodes/CN=system:node:n9');
  await submit('boot-token', 'not-node', '/O=system:nodes/CN=alice');
  await submit('boot-token', 'server-usage', '/O=system:nodes/CN=system:node:n4', ['digital signature', 'server auth']);
  // a request approved by hand afterwards is signed: by then the others were seen too
  await submit('eve-token', 'witness', '/O=system:nodes/CN=system:node:n5');
  const w = await plain(s.url, 'GET', `${CSR_PATH()}/witness`);
  w.json.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Manual' }] };
  assert.equal((await plain(s.url, 'PUT', `${CSR_PATH()}/witness/approval`, w.json)).status, 200);
  await settled(s.url, 'witness');
  for (const name of ['eve', 'other-node', 'not-node', 'server-usage']) {
    const csr = (await plain(s.url, 'GET', `${CSR_PATH()}/${name}`)).json;
    assert.deepEqual(csr.status, {}, name);
  }
});
