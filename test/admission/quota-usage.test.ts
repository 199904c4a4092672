/**
 * What a ResourceQuota counts (src/admission/quota-usage.ts), in process: object counts by
 * legacy and count/ names, service node ports and load balancers, claim storage, pod compute
 * (requests, limits, bare cpu/memory meaning requests), terminal pods counting nothing, the
 * containers missing a tracked request or limit, and the printed sums. The end-to-end refusals
 * are test/admission/resource-quota.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countedType, formatQuantity, missingCompute, usageOf } from '../../src/admission/quota-usage.js';

const pod = (
  containers: { name?: string; resources?: Record<string, Record<string, string> | undefined> }[],
  phase?: string,
) => ({
  spec: { containers },
  ...(phase ? { status: { phase } } : {}),
});
const c = (requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name: 'c',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});

test('countedType: legacy names, count/<resource> and count/<resource>.<group>; other names count no type', () => {
  for (const n of [
    'pods',
    'services',
    'configmaps',
    'secrets',
    'persistentvolumeclaims',
    'replicationcontrollers',
    'resourcequotas',
  ]) {
    assert.equal(countedType(n), `/${n}`, n);
  }
  assert.equal(countedType('count/configmaps'), '/configmaps');
  assert.equal(countedType('count/deployments.apps'), 'apps/deployments');
  assert.equal(countedType('count/widgets.example.com'), 'example.com/widgets');
  for (const n of ['services.nodeports', 'requests.cpu', 'cpu', 'count', 'counts/pods', 'deployments.apps'])
    assert.equal(countedType(n), undefined, n);
});

test('usageOf: one per counted object of the named type only', () => {
  assert.deepEqual(usageOf('/configmaps', {}, ['configmaps', 'count/configmaps', 'pods', 'count/secrets']), {
    configmaps: 1,
    'count/configmaps': 1,
  });
  assert.deepEqual(usageOf('apps/deployments', {}, ['count/deployments.apps', 'count/deployments']), {
    'count/deployments.apps': 1,
  });
});

test('usageOf: services count their node ports (NodePort and LoadBalancer) and load balancers', () => {
  const names = ['services', 'services.nodeports', 'services.loadbalancers'];
  const svc = (type: string | undefined, ports: number) => ({
    spec: { ...(type ? { type } : {}), ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) },
  });
  assert.deepEqual(usageOf('/services', svc(undefined, 2), names), {
    services: 1,
    'services.nodeports': 0,
    'services.loadbalancers': 0,
  });
  assert.deepEqual(usageOf('/services', svc('ClusterIP', 2), names), {
    services: 1,
    'services.nodeports': 0,
    'services.loadbalancers': 0,
  });
  assert.deepEqual(usageOf('/services', svc('NodePort', 2), names), {
    services: 1,
    'services.nodeports': 2,
    'services.loadbalancers': 0,
  });
  assert.deepEqual(usageOf('/services', svc('LoadBalancer', 3), names), {
    services: 1,
    'services.nodeports': 3,
    'services.loadbalancers': 1,
  });
  assert.deepEqual(
    usageOf('/services', { spec: { type: 'NodePort' } }, names),
    { services: 1, 'services.nodeports': 0, 'services.loadbalancers': 0 },
    'no ports',
  );
  assert.deepEqual(usageOf('/configmaps', svc('LoadBalancer', 3), names), {}, 'other types count none of these');
});

test('usageOf: claims count their requested storage', () => {
  assert.deepEqual(
    usageOf('/persistentvolumeclaims', { spec: { resources: { requests: { storage: '2Gi' } } } }, [
      'requests.storage',
      'persistentvolumeclaims',
    ]),
    { 'requests.storage': 2 * 2 ** 30, persistentvolumeclaims: 1 },
  );
  assert.deepEqual(usageOf('/persistentvolumeclaims', { spec: {} }, ['requests.storage']), { 'requests.storage': 0 });
  assert.deepEqual(
    usageOf('/configmaps', { spec: { resources: { requests: { storage: '1Gi' } } } }, ['requests.storage']),
    {},
    'claims count storage',
  );
});

test('usageOf: pods sum requests and limits over containers; bare cpu, memory and ephemeral-storage are requests', () => {
  const p = pod([
    c({ cpu: '250m', memory: '64Mi' }, { cpu: '1', memory: '128Mi' }),
    c({ cpu: '500m' }),
    { name: 'bare' },
  ]);
  assert.deepEqual(
    usageOf('/pods', p, [
      'pods',
      'requests.cpu',
      'limits.cpu',
      'requests.memory',
      'limits.memory',
      'cpu',
      'memory',
      'ephemeral-storage',
      'limits.nvidia.com/gpu',
      'storage',
    ]),
    {
      pods: 1,
      'requests.cpu': 0.75,
      'limits.cpu': 1,
      'requests.memory': 64 * 2 ** 20,
      'limits.memory': 128 * 2 ** 20,
      cpu: 0.75,
      memory: 64 * 2 ** 20,
      'ephemeral-storage': 0,
      'limits.nvidia.com/gpu': 0,
    },
  );
  assert.deepEqual(usageOf('/pods', {}, ['requests.cpu']), { 'requests.cpu': 0 }, 'a pod without spec');
});

test('usageOf: a pod that Succeeded or Failed counts nothing; Running, Pending and no phase count', () => {
  const names = ['pods', 'count/pods', 'requests.cpu'];
  const containers = [c({ cpu: '1' })];
  for (const phase of ['Succeeded', 'Failed'])
    assert.deepEqual(usageOf('/pods', pod(containers, phase), names), {}, phase);
  for (const phase of ['Running', 'Pending', undefined]) {
    assert.deepEqual(
      usageOf('/pods', pod(containers, phase), names),
      { pods: 1, 'count/pods': 1, 'requests.cpu': 1 },
      String(phase),
    );
  }
  assert.deepEqual(
    usageOf('/configmaps', { status: { phase: 'Failed' } }, ['configmaps']),
    { configmaps: 1 },
    'the phase rule is for pods only',
  );
});

test('missingCompute: the tracked requests./limits. cpu and memory some container lacks, sorted', () => {
  const p = pod([c({ cpu: '1', memory: '1Mi' }, { cpu: '1' }), c({ cpu: '1' }, { cpu: '1', memory: '1Mi' })]);
  assert.deepEqual(
    missingCompute(p, [
      'requests.memory',
      'limits.memory',
      'requests.cpu',
      'limits.cpu',
      'pods',
      'requests.storage',
      'cpu',
    ]),
    ['limits.memory', 'requests.memory'],
  );
  assert.deepEqual(missingCompute(pod([c({ cpu: '1' }, { cpu: '1' })]), ['requests.cpu', 'limits.cpu']), []);
  assert.deepEqual(missingCompute({}, ['requests.cpu']), [], 'no containers lack anything');
});

test('formatQuantity: binary suffixes for exact multiples, millis for fractions, canonical forms', () => {
  assert.equal(formatQuantity(0), '0');
  assert.equal(formatQuantity(2), '2');
  assert.equal(formatQuantity(1000), '1k');
  assert.equal(formatQuantity(1024), '1Ki');
  assert.equal(formatQuantity(3 * 2 ** 20), '3Mi');
  assert.equal(formatQuantity(2 ** 30), '1Gi');
  assert.equal(formatQuantity(5 * 2 ** 40), '5Ti');
  assert.equal(formatQuantity(1536), '1536');
  assert.equal(formatQuantity(0.9), '900m');
  assert.equal(formatQuantity(1.5), '1500m');
});
