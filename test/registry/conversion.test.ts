import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversionFor, jsonConverter } from '../../src/registry/conversion.js';
import { makeIdentity } from '../../src/api/identity.js';

const conv = conversionFor('events.plat.io', 'v1', 'events')!;

const core = {
  kind: 'Event',
  apiVersion: 'v1',
  metadata: { name: 'e', namespace: 'ns', resourceVersion: '7' },
  involvedObject: { kind: 'Pod', name: 'p' },
  reason: 'R',
  message: 'm',
  source: { component: 'c', host: 'h' },
  firstTimestamp: '2025-01-01T00:00:00Z',
  lastTimestamp: '2025-01-01T00:01:00Z',
  count: 4,
  type: 'Warning',
  eventTime: '2025-01-01T00:00:00.000000Z',
  series: { count: 2, lastObservedTime: '2025-01-01T00:02:00.000000Z' },
  action: 'A',
  related: { kind: 'Node', name: 'n' },
  reportingComponent: 'ctl',
  reportingInstance: 'i',
};

test('core v1 -> events v1: every renamed field, the rest as is, upstream field order', () => {
  const v1 = conv.fromStorage(core, 'events.plat.io/v1');
  assert.deepEqual(Object.keys(v1), [
    'kind',
    'apiVersion',
    'metadata',
    'eventTime',
    'series',
    'reportingController',
    'reportingInstance',
    'action',
    'reason',
    'regarding',
    'related',
    'note',
    'type',
    'deprecatedSource',
    'deprecatedFirstTimestamp',
    'deprecatedLastTimestamp',
    'deprecatedCount',
  ]);
  assert.equal(v1.apiVersion, 'events.plat.io/v1');
  assert.deepEqual(v1.regarding, core.involvedObject);
  assert.equal(v1.note, 'm');
  assert.deepEqual(v1.deprecatedSource, core.source);
  assert.equal(v1.deprecatedCount, 4);
  assert.equal(v1.reportingController, 'ctl');
  assert.equal(core.apiVersion, 'v1', 'the input is not changed');
});

test('events v1 -> core v1 round-trips', () => {
  assert.deepEqual(conv.toStorage(conv.fromStorage(core, 'events.plat.io/v1')), core);
  const v1 = {
    kind: 'Event',
    apiVersion: 'events.plat.io/v1',
    metadata: { name: 'x' },
    note: 'n',
    regarding: { name: 'p' },
    unknownField: 1,
  };
  assert.deepEqual(conv.fromStorage(conv.toStorage(v1), 'events.plat.io/v1'), v1);
});

test('only events.<domain>/v1 converts; field labels follow upstream AddFieldLabelConversionsForEvent', () => {
  assert.equal(conversionFor('', 'v1', 'events'), undefined);
  assert.equal(conversionFor('apps', 'v1', 'deployments'), undefined);
  assert.equal(conv.fieldLabels['regarding.name'], 'involvedObject.name');
  assert.equal(conv.fieldLabels['reportingController'], 'reportingComponent');
  assert.equal(conv.fieldLabels['involvedObject.name'], undefined);
});

test('the front thread converter: events under another domain, other kinds restamped', () => {
  const convert = jsonConverter(makeIdentity('k8s.io'));
  const out = JSON.parse(convert('/events', 'events.k8s.io/v1', JSON.stringify(core)));
  assert.equal(out.apiVersion, 'events.k8s.io/v1');
  assert.equal(out.note, 'm');
  const hpa = JSON.parse(
    convert(
      'autoscaling/horizontalpodautoscalers',
      'autoscaling/v1',
      JSON.stringify({ apiVersion: 'autoscaling/v2', spec: {} }),
    ),
  );
  assert.deepEqual(hpa, { apiVersion: 'autoscaling/v1', spec: {} });
});
