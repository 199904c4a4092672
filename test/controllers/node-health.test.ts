import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsUnknown, nextTaints, unknownStatus, wantedTaints } from '../../src/controllers/node-health.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const node = (conditions: any[], spec: any = {}) => ({
  metadata: { name: 'n', creationTimestamp: '2025-06-01T00:00:00Z' },
  spec,
  status: { conditions },
});
const cond = (type: string, status: string) => ({
  type,
  status,
  reason: 'R',
  message: 'm',
  lastHeartbeatTime: '2025-06-01T11:00:00Z',
  lastTransitionTime: '2025-06-01T10:00:00Z',
});

test('unknownStatus: present conditions become NodeStatusUnknown (heartbeat kept), missing ones NodeStatusNeverUpdated', () => {
  const n = node([cond('Ready', 'True'), cond('NetworkUnavailable', 'False')]);
  const st: any = unknownStatus(n, NOW);
  const ready = st.conditions.find((c: any) => c.type === 'Ready');
  assert.deepEqual(ready, {
    type: 'Ready',
    status: 'Unknown',
    reason: 'NodeStatusUnknown',
    message: 'Kubelet stopped posting node status.',
    lastHeartbeatTime: '2025-06-01T11:00:00Z',
    lastTransitionTime: '2025-06-01T12:00:00Z',
  });
  const mem = st.conditions.find((c: any) => c.type === 'MemoryPressure');
  assert.deepEqual(
    [mem.status, mem.reason, mem.lastHeartbeatTime],
    ['Unknown', 'NodeStatusNeverUpdated', '2025-06-01T00:00:00Z'],
  );
  assert.equal(
    st.conditions.find((c: any) => c.type === 'NetworkUnavailable').status,
    'False',
    'other conditions untouched',
  );
  assert.equal(n.status.conditions[0]!.status, 'True', 'the input is not changed');
  assert.equal(needsUnknown({ status: st }), false);
  assert.equal(needsUnknown(n), true);
});

test('wantedTaints: upstream condition -> taint table, unschedulable, NoExecute for Ready False/Unknown', () => {
  const cases: [any, string[]][] = [
    [node([cond('Ready', 'True')]), []],
    [node([cond('Ready', 'False')]), ['node.platform.io/not-ready:NoSchedule', 'node.platform.io/not-ready:NoExecute']],
    [
      node([cond('Ready', 'Unknown')]),
      ['node.platform.io/unreachable:NoSchedule', 'node.platform.io/unreachable:NoExecute'],
    ],
    [
      node([
        cond('Ready', 'True'),
        cond('MemoryPressure', 'True'),
        cond('DiskPressure', 'True'),
        cond('PIDPressure', 'True'),
        cond('NetworkUnavailable', 'True'),
      ]),
      [
        'node.platform.io/memory-pressure:NoSchedule',
        'node.platform.io/disk-pressure:NoSchedule',
        'node.platform.io/pid-pressure:NoSchedule',
        'node.platform.io/network-unavailable:NoSchedule',
      ],
    ],
    [node([cond('Ready', 'True')], { unschedulable: true }), ['node.platform.io/unschedulable:NoSchedule']],
    [node([]), []],
  ];
  for (const [n, want] of cases)
    assert.deepEqual(
      wantedTaints(n, 'platform')
        .map((t) => `${t.key}:${t.effect}`)
        .sort(),
      want.sort(),
    );
  assert.deepEqual(
    wantedTaints(node([cond('Ready', 'Unknown')]), 'kubernetes').map((t) => t.key),
    ['node.kubernetes.io/unreachable', 'node.kubernetes.io/unreachable'],
  );
});

test('nextTaints: keeps foreign taints in place, drops stale owned ones, appends missing ones; undefined when in line', () => {
  const foreign = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  const stale = { key: 'node.platform.io/not-ready', effect: 'NoSchedule' };
  const n = node([cond('Ready', 'Unknown')], { taints: [stale, foreign] });
  const next = nextTaints(n, 'platform', NOW)!;
  assert.deepEqual(next, [
    foreign,
    { key: 'node.platform.io/unreachable', effect: 'NoSchedule' },
    { key: 'node.platform.io/unreachable', effect: 'NoExecute', timeAdded: '2025-06-01T12:00:00Z' },
  ]);
  assert.equal(nextTaints({ ...n, spec: { taints: next } }, 'platform', NOW + 1000), undefined);
  assert.equal(nextTaints(node([cond('Ready', 'True')], { taints: [foreign] }), 'platform', NOW), undefined);
  assert.deepEqual(nextTaints(node([cond('Ready', 'True')], { taints: next }), 'platform', NOW), [foreign]);
});
