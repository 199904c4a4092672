/** The default kubelet client certificate: issued from the cluster CA at first start, reused after. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';

test('with --api-domain k8s.io the server presents kube-apiserver-kubelet-client (no organization, clientAuth), kept across restarts', async () => {
  let s = await startServer(['--secure-port', '0', '--api-domain', 'k8s.io']);
  try {
    const cert = new X509Certificate(readFileSync(join(s.dataDir, 'pki', 'kubelet-client.crt')));
    const ca = new X509Certificate(readFileSync(join(s.dataDir, 'pki', 'ca.crt')));
    assert.equal(cert.subject, 'CN=kube-apiserver-kubelet-client');
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'signed by the cluster CA');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    await s.stop();
    s = await startServer(['--secure-port', '0', '--api-domain', 'k8s.io'], s.dataDir);
    assert.equal(
      new X509Certificate(readFileSync(join(s.dataDir, 'pki', 'kubelet-client.crt'))).serialNumber,
      cert.serialNumber,
    );
  } finally {
    await s.stop();
    s.cleanup();
  }
});
