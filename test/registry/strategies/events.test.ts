import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateEventUpdateV1 } from '../../../src/registry/strategies/events.js';

const base = {
  apiVersion: 'events.plat.io/v1',
  kind: 'Event',
  metadata: { name: 'e' },
  eventTime: '2025-01-01T00:00:00.000000Z',
  reportingController: 'platform.io/x',
  reportingInstance: 'i',
  action: 'A',
  reason: 'R',
  type: 'Normal',
  note: 'n',
  regarding: { kind: 'Pod', name: 'p' },
  series: { count: 2, lastObservedTime: '2025-01-01T00:01:00.000000Z' },
};

test('events.plat.io/v1 update rules: one valid and one invalid case per rule (field path as upstream reports it)', () => {
  const cases: [string, any, string | undefined][] = [
    ['series may change', { series: { count: 5, lastObservedTime: '2025-01-01T00:09:00.000000Z' } }, undefined],
    [
      'series.count at least 2',
      { series: { count: 1, lastObservedTime: '2025-01-01T00:09:00.000000Z' } },
      'series.count',
    ],
    ['series.lastObservedTime required', { series: { count: 3 } }, 'series.lastObservedTime'],
    ['labels may change', { metadata: { name: 'e', labels: { a: 'b' } } }, undefined],
    ['note', { note: 'other' }, 'message'],
    ['regarding', { regarding: { kind: 'Pod', name: 'q' } }, 'involvedObject'],
    ['reason', { reason: 'Other' }, 'reason'],
    ['type', { type: 'Warning' }, 'type'],
    ['eventTime', { eventTime: '2025-01-02T00:00:00.000000Z' }, 'eventTime'],
    ['action', { action: 'B' }, 'action'],
    ['related', { related: { kind: 'Node', name: 'n' } }, 'related'],
    ['reportingController', { reportingController: 'platform.io/y' }, 'reportingController'],
    ['reportingInstance', { reportingInstance: 'j' }, 'reportingInstance'],
    ['deprecatedCount', { deprecatedCount: 3 }, 'count'],
    ['deprecatedSource', { deprecatedSource: { component: 'c' } }, 'source'],
    ['deprecatedFirstTimestamp', { deprecatedFirstTimestamp: '2025-01-01T00:00:00Z' }, 'firstTimestamp'],
    ['deprecatedLastTimestamp', { deprecatedLastTimestamp: '2025-01-01T00:00:00Z' }, 'lastTimestamp'],
    ['zero values equal absent ones', { deprecatedSource: {}, deprecatedCount: 0 }, undefined],
  ];
  for (const [what, change, field] of cases) {
    const causes = validateEventUpdateV1({ ...base, ...change }, base);
    if (field === undefined) assert.deepEqual(causes, [], what);
    else
      assert.deepEqual(
        causes.map((c) => [c.field, c.reason]),
        [[field, field === 'series.lastObservedTime' ? 'FieldValueRequired' : 'FieldValueInvalid']],
        what,
      );
  }
});
