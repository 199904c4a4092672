/** The kubelet client flags: defaults and the exact startup errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../src/server/options.js';

test('kubelet flags: upstream defaults; values parsed and checked', () => {
  const d = parseArgs([]);
  assert.deepEqual(
    [d.kubeletPreferredAddressTypes, d.kubeletPort, d.kubeletTimeoutMs, d.kubeletCertificateAuthority],
    [['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'], 10250, 5000, ''],
  );
  const o = parseArgs([
    '--kubelet-preferred-address-types',
    'InternalIP,Hostname',
    '--kubelet-port',
    '11250',
    '--kubelet-timeout',
    '2s',
    '--kubelet-certificate-authority',
    '/ca.crt',
  ]);
  assert.deepEqual(
    [o.kubeletPreferredAddressTypes, o.kubeletPort, o.kubeletTimeoutMs, o.kubeletCertificateAuthority],
    [['InternalIP', 'Hostname'], 11250, 2000, '/ca.crt'],
  );
  assert.throws(
    () => parseArgs(['--kubelet-preferred-address-types', 'InternalIP,Bogus']),
    /^Error: --kubelet-preferred-address-types: unknown address type "Bogus"/,
  );
  assert.throws(
    () => parseArgs(['--kubelet-port', '0']),
    /^Error: --kubelet-port must be an integer between 1 and 65535, got "0"$/,
  );
  assert.throws(
    () => parseArgs(['--kubelet-timeout', 'soon']),
    /^Error: --kubelet-timeout must be a positive duration such as 5s, got "soon"$/,
  );
  assert.throws(
    () => parseArgs(['--kubelet-client-certificate', '/c.crt']),
    /^Error: --kubelet-client-certificate and --kubelet-client-key must be given together$/,
  );
});
