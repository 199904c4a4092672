/** Where connect subresources go: upstream's address preference, container defaulting, kubelet query names. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatusError } from '../../src/api/status.js';
import {
  logOptions,
  logPath,
  nodeConnection,
  podProxyTarget,
  proxyableIP,
  streamPath,
  validateContainer,
  type PodLike,
} from '../../src/kubelet/location.js';
import { NODE_ADDRESS_TYPES } from '../../src/kubelet/options.js';

const status = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return [(e as StatusError).status.code, (e as StatusError).status.message];
  }
  return assert.fail('no error');
};

test('nodeConnection: the first preferred address type present, the advertised port else --kubelet-port', () => {
  const node = {
    metadata: { name: 'n', labels: { 'kubernetes.io/hostname': 'host-n' } },
    status: {
      addresses: [
        { type: 'ExternalIP', address: '203.0.113.9' },
        { type: 'InternalIP', address: '10.1.2.3' },
      ],
    },
  };
  assert.deepEqual(
    nodeConnection(node, NODE_ADDRESS_TYPES, 10250),
    { host: 'host-n', port: 10250 },
    'Hostname falls back to the hostname label',
  );
  assert.deepEqual(
    nodeConnection(
      { ...node, status: { ...node.status, daemonEndpoints: { kubeletEndpoint: { Port: 12345 } } } },
      ['InternalIP', 'ExternalIP'],
      10250,
    ),
    { host: '10.1.2.3', port: 12345 },
  );
  assert.deepEqual(
    status(() => nodeConnection(node, ['InternalDNS'], 10250)),
    [500, 'no preferred addresses found; known addresses: [{ExternalIP 203.0.113.9} {InternalIP 10.1.2.3}]'],
  );
});

const pod: PodLike = {
  metadata: { name: 'p', namespace: 'ns' },
  spec: { nodeName: 'n', initContainers: [{ name: 'init' }], containers: [{ name: 'a' }, { name: 'b' }] },
};

test("validateContainer: the only container, else upstream's list (init containers first)", () => {
  assert.equal(validateContainer('', { ...pod, spec: { containers: [{ name: 'only' }] } }), 'only');
  assert.deepEqual(
    status(() => validateContainer('', pod)),
    [400, 'a container name must be specified for pod p, choose one of: [init a b]'],
  );
  assert.deepEqual(
    status(() => validateContainer('zz', pod)),
    [400, 'container zz is not valid for pod p'],
  );
  assert.equal(validateContainer('init', pod), 'init');
});

test('logPath: the kubelet query in url.Values order; options validated as PodLogOptions', () => {
  const o = logOptions(
    'p',
    new URLSearchParams(
      'follow=true&timestamps=1&tailLines=5&limitBytes=10&sinceTime=2024-01-02T03:04:05Z&previous=true',
    ),
  );
  assert.equal(
    logPath(pod, 'a', o),
    '/containerLogs/ns/p/a?follow=true&limitBytes=10&previous=true&sinceTime=2024-01-02T03%3A04%3A05Z&tailLines=5&timestamps=true',
  );
  assert.deepEqual(
    status(() => logOptions('p', new URLSearchParams('sinceSeconds=5&sinceTime=2024-01-02T03:04:05Z'))),
    [422, 'PodLogOptions "p" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'],
  );
  assert.deepEqual(
    status(() => logOptions('p', new URLSearchParams('limitBytes=0'))),
    [422, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0'],
  );
});

test('streamPath: kubelet parameter names; no node is a 400', () => {
  const q = new URLSearchParams(
    'command=sh&command=-c&command=exit 3&container=b&stdin=true&stdout=true&stderr=true&tty=false',
  );
  assert.equal(
    streamPath('exec', pod, q),
    '/exec/ns/p/b?command=sh&command=-c&command=exit+3&error=1&input=1&output=1',
  );
  assert.equal(
    streamPath('portforward', pod, new URLSearchParams('ports=80&ports=443')),
    '/portForward/ns/p?port=80%2C443',
  );
  assert.deepEqual(
    status(() => streamPath('attach', { ...pod, spec: { containers: [{ name: 'a' }] } }, new URLSearchParams())),
    [400, 'pod p does not have a host assigned'],
  );
});

test('proxies never target loopback, link-local or unspecified addresses (upstream IsProxyableIP)', () => {
  for (const ip of ['127.0.0.1', '::1', '169.254.1.1', '0.0.0.0', 'fe80::1', ''])
    assert.equal(proxyableIP(ip, false), false, ip);
  assert.equal(proxyableIP('10.0.0.5', false), true);
  const running = { ...pod, status: { podIP: '127.0.0.1' } };
  assert.deepEqual(
    status(() => podProxyTarget(running, '80', false)),
    [400, 'address not allowed'],
  );
  assert.deepEqual(podProxyTarget(running, '80', true), { host: '127.0.0.1', port: 80 });
});
