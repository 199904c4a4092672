/** Service defaults and ClusterIP / NodePort allocation: requested, taken, out of range, exhausted, released, type changes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceStrategy } from '../../../src/registry/strategies/services.js';
import { ctx, prepared, statusOf } from './harness.js';

const svc = (name: string, spec: any = {}, namespace = 'default') => ({
  kind: 'Service',
  metadata: { name, namespace },
  spec: { ports: [{ port: 80 }], ...spec },
});

/** Creates services one after the other, each seeing the ones before (as the store's existing()). */
function createAll(specs: any[], config = {}): any[] {
  const made: any[] = [];
  for (const s of specs) made.push(prepared(serviceStrategy, s, ctx([...made], config)));
  return made;
}

test('defaults: type, clusterIPs, ipFamilies, policy, affinity, protocol and targetPort', () => {
  const [s] = createAll([
    svc('a', {
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 81, targetPort: 'http' },
      ],
    }),
  ]);
  const { clusterIP, ...rest } = s.spec;
  assert.equal(clusterIP, '10.0.0.2');
  assert.deepEqual(rest, {
    ports: [
      { name: 'a', port: 80, protocol: 'TCP', targetPort: 80 },
      { name: 'b', port: 81, targetPort: 'http', protocol: 'TCP' },
    ],
    type: 'ClusterIP',
    sessionAffinity: 'None',
    clusterIPs: ['10.0.0.2'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
  });
  assert.deepEqual(s.status, { loadBalancer: {} });
});

test('ClusterIPs: lowest free address, .1 kept for default/platform, requested honoured', () => {
  const made = createAll([
    svc('a'),
    svc('b', {}, 'other'),
    svc('c', { clusterIP: '10.0.0.77' }),
    svc('platform'),
    svc('d'),
  ]);
  assert.deepEqual(
    made.map((s) => s.spec.clusterIP),
    ['10.0.0.2', '10.0.0.3', '10.0.0.77', '10.0.0.1', '10.0.0.4'],
  );
  assert.deepEqual(made[2].spec.clusterIPs, ['10.0.0.77']);
});

test('a requested ClusterIP already taken, reserved or out of range is 422 on spec.clusterIPs', () => {
  const existing = createAll([svc('a')]);
  const cases: [string, string][] = [
    ['10.0.0.2', 'failed to allocate IP 10.0.0.2: provided IP is already allocated'],
    ['10.0.0.1', 'failed to allocate IP 10.0.0.1: provided IP is already allocated'],
    [
      '10.0.1.5',
      'failed to allocate IP 10.0.1.5: the provided IP (10.0.1.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
    ],
    ['10.0.0.0', 'is not in the valid range'],
    ['10.0.0.255', 'is not in the valid range'],
  ];
  for (const [ip, message] of cases) {
    const st = statusOf(() => prepared(serviceStrategy, svc('b', { clusterIP: ip }), ctx(existing)));
    assert.equal(st.code, 422, ip);
    const [cause] = st.details.causes;
    assert.equal(cause.field, 'spec.clusterIPs');
    assert.equal(cause.reason, 'FieldValueInvalid');
    assert.ok(cause.message.startsWith(`Invalid value: []string{"${ip}"}: `), cause.message);
    assert.ok(cause.message.includes(message), cause.message);
  }
});

test('headless and ExternalName services get no address', () => {
  const [h, e] = createAll([
    svc('h', { clusterIP: 'None' }),
    svc('e', { type: 'ExternalName', externalName: 'db.example.com', ports: [] }),
  ]);
  assert.deepEqual([h.spec.clusterIP, h.spec.clusterIPs], ['None', ['None']]);
  assert.equal(e.spec.clusterIP, undefined);
  assert.equal(e.spec.ipFamilies, undefined);
  const next = createAll([svc('n')], {});
  assert.equal(next[0].spec.clusterIP, '10.0.0.2');
});

test('an exhausted ClusterIP range is a 500 "range is full"; a deleted service frees its address', () => {
  const small = { serviceClusterIPRange: '10.9.0.0/29' }; // usable .1-.6, .1 kept
  const made = createAll(
    ['a', 'b', 'c', 'd', 'e'].map((n) => svc(n)),
    small,
  );
  assert.deepEqual(
    made.map((s) => s.spec.clusterIP),
    ['10.9.0.2', '10.9.0.3', '10.9.0.4', '10.9.0.5', '10.9.0.6'],
  );
  const st = statusOf(() => prepared(serviceStrategy, svc('f'), ctx(made, small)));
  assert.deepEqual(
    [st.code, st.reason, st.message],
    [500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full'],
  );
  const afterDelete = made.filter((s) => s.metadata.name !== 'c');
  assert.equal(prepared(serviceStrategy, svc('f'), ctx(afterDelete, small)).spec.clusterIP, '10.9.0.4');
});

test('NodePorts: allocated from the range, requested honoured, taken or out of range refused, exhaustion 500', () => {
  const np = (name: string, ports: any[] = [{ port: 80 }], type = 'NodePort') => svc(name, { type, ports });
  const made = createAll([
    np('a'),
    np('b', [
      { name: 'x', port: 80, nodePort: 30500 },
      { name: 'y', port: 81 },
    ]),
    np('lb', [{ port: 443 }], 'LoadBalancer'),
  ]);
  assert.deepEqual(
    made.map((s) => s.spec.ports.map((p: any) => p.nodePort)),
    [[30000], [30500, 30001], [30002]],
  );
  assert.equal(made[2].spec.allocateLoadBalancerNodePorts, true);
  assert.equal(made[0].spec.externalTrafficPolicy, 'Cluster');
  for (const [nodePort, message] of [
    [30500, 'provided port is already allocated'],
    [80, 'provided port is not in the valid range. The range of valid ports is 30000-32767'],
  ] as const) {
    const st = statusOf(() => prepared(serviceStrategy, np('c', [{ port: 80, nodePort }]), ctx(made)));
    assert.equal(st.code, 422);
    assert.deepEqual(st.details.causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.ports[0].nodePort',
        message: `Invalid value: ${nodePort}: ${message}`,
      },
    ]);
  }
  const tiny = { serviceNodePortRange: '31000-31001' };
  const two = createAll([np('a'), np('b')], tiny);
  const st = statusOf(() => prepared(serviceStrategy, np('c'), ctx(two, tiny)));
  assert.deepEqual(
    [st.code, st.message],
    [500, 'Internal error occurred: failed to allocate a nodePort: range is full'],
  );
  assert.equal(prepared(serviceStrategy, np('c'), ctx(two.slice(1), tiny)).spec.ports[0].nodePort, 31000);
});

test('updates: type changes allocate or drop node ports and addresses; omitted values are kept', () => {
  const [old] = createAll([svc('a')]);
  const toNodePort = { ...structuredClone(old), spec: { ...structuredClone(old.spec), type: 'NodePort' } };
  serviceStrategy.prepareForUpdate(toNodePort, old, ctx([old]));
  assert.equal(toNodePort.spec.ports[0].nodePort, 30000);
  assert.equal(toNodePort.spec.clusterIP, old.spec.clusterIP);
  const resend = { ...structuredClone(toNodePort), spec: { type: 'NodePort', ports: [{ port: 80 }] } };
  serviceStrategy.prepareForUpdate(resend, toNodePort, ctx([toNodePort]));
  assert.deepEqual([resend.spec.clusterIP, resend.spec.ports[0].nodePort], [old.spec.clusterIP, 30000]);
  const back = { ...structuredClone(resend), spec: { ...structuredClone(resend.spec), type: 'ClusterIP' } };
  serviceStrategy.prepareForUpdate(back, resend, ctx([resend]));
  assert.equal(back.spec.ports[0].nodePort, undefined);
  const ext = {
    ...structuredClone(old),
    spec: { ...structuredClone(old.spec), type: 'ExternalName', externalName: 'x.example.com' },
  };
  serviceStrategy.prepareForUpdate(ext, old, ctx([old]));
  assert.deepEqual([ext.spec.clusterIP, ext.spec.clusterIPs], [undefined, undefined]);
  assert.deepEqual(serviceStrategy.validate(ext), []);
});

test('services/proxy answers 503 at once', () => {
  const st = statusOf(() => serviceStrategy.getSubresource('proxy', { metadata: { name: 'web' } }));
  assert.deepEqual(
    [st.code, st.reason, st.message],
    [503, 'ServiceUnavailable', 'no endpoints available for service "web"'],
  );
});
