/** pods/binding and the node-agent subresources, called on the strategy directly; the Quantity parser. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podStrategy } from '../../../src/registry/strategies/pods.js';
import {
  parseQuantity,
  QUANTITY_FORMAT_ERROR,
  QUANTITY_SUFFIX_ERROR,
} from '../../../src/registry/strategies/quantity.js';
import { ctx, prepared, statusOf } from './harness.js';

const pod = (spec: any = {}, status?: any) => {
  const p = prepared(podStrategy, {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
  });
  if (status) p.status = { ...p.status, ...status };
  return p;
};

test('binding sets spec.nodeName and PodScheduled, replies a Success Status', () => {
  const out = podStrategy.createSubresource(
    'binding',
    { metadata: { name: 'p', annotations: { a: 'b' } }, target: { kind: 'Node', name: 'n1' } },
    pod(),
    ctx(),
  )!;
  assert.deepEqual(out.reply, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  assert.equal(out.next?.spec?.nodeName, 'n1');
  assert.equal(out.next?.metadata.annotations?.a, 'b');
  assert.deepEqual(out.next?.status?.conditions, [
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-02T03:04:05Z' },
  ]);
});

test('binding: a bound pod is 409, a bad target 422, another name 400', () => {
  const cases: [any, any, number, string][] = [
    [
      { target: { name: 'n2' } },
      pod({ nodeName: 'n1' }),
      409,
      'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"',
    ],
    [{ target: { kind: 'Node' } }, pod(), 422, 'Binding "p" is invalid: target.name: Required value'],
    [
      { target: { kind: 'Pod', name: 'x' } },
      pod(),
      422,
      'Binding "p" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
    ],
    [
      { metadata: { name: 'q' }, target: { name: 'n1' } },
      pod(),
      400,
      'name in URL does not match name in Binding object',
    ],
    [
      { target: { name: 'n1' } },
      pod({ schedulingGates: [{ name: 'g' }] }),
      409,
      'pod p has non-empty .spec.schedulingGates',
    ],
  ];
  for (const [body, p, code, message] of cases) {
    const st = statusOf(() => podStrategy.createSubresource('binding', body, p, ctx()));
    assert.equal(st.code, code, message);
    assert.ok(st.message.endsWith(message), st.message);
  }
});

test('log, exec, attach, portforward and proxy answer at once', () => {
  const unscheduled = pod();
  const scheduled = pod({ nodeName: 'n1' }, { podIP: '10.244.0.5' });
  assert.equal(podStrategy.getSubresource('log', unscheduled), '', 'upstream: no location, empty log');
  for (const sub of ['exec', 'attach', 'portforward']) {
    const st = statusOf(() => podStrategy.getSubresource(sub, unscheduled));
    assert.deepEqual([st.code, st.reason, st.message], [400, 'BadRequest', 'pod p does not have a host assigned'], sub);
    assert.equal(statusOf(() => podStrategy.createSubresource(sub, {}, unscheduled, ctx())).code, 400, sub);
  }
  for (const sub of ['log', 'exec', 'attach', 'portforward', 'proxy']) {
    const st = statusOf(() => podStrategy.getSubresource(sub, scheduled));
    assert.deepEqual([st.code, st.reason], [503, 'ServiceUnavailable'], sub);
    assert.match(st.message, /no node agent is connected for pod p/);
  }
  assert.deepEqual(statusOf(() => podStrategy.getSubresource('proxy', unscheduled)).message, 'address not allowed');
  assert.equal(podStrategy.getSubresource('status', scheduled), undefined);
  assert.equal(podStrategy.getSubresource('ephemeralcontainers', scheduled), undefined);
});

test('Quantity parser', () => {
  const rows: [unknown, number | string][] = [
    ['100m', 0.1],
    ['1Gi', 2 ** 30],
    ['0.5', 0.5],
    ['1e3', 1000],
    ['1E-2', 0.01],
    ['2k', 2000],
    ['1.5Mi', 1.5 * 2 ** 20],
    ['+3', 3],
    ['-1', -1],
    ['.5', 0.5],
    [2, 2],
    [0.25, 0.25],
    ['5n', 5e-9],
    ['1E', 1e18],
    ['abc', QUANTITY_FORMAT_ERROR],
    ['', QUANTITY_FORMAT_ERROR],
    ['1 Gi', QUANTITY_FORMAT_ERROR],
    ['1..2', QUANTITY_FORMAT_ERROR],
    [true, QUANTITY_FORMAT_ERROR],
    ['1Kii', QUANTITY_SUFFIX_ERROR],
    ['1e', QUANTITY_SUFFIX_ERROR],
    ['1mi', QUANTITY_SUFFIX_ERROR],
  ];
  for (const [input, want] of rows) {
    const got = parseQuantity(input);
    if (typeof want === 'number') {
      assert.ok('value' in got, `${input}: ${JSON.stringify(got)}`);
      assert.ok(Math.abs(got.value - want) <= Math.abs(want) * 1e-12, `${input}: ${got.value}`);
    } else assert.deepEqual(got, { error: want }, String(input));
  }
});
