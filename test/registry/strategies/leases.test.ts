import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateLeaseSpec } from '../../../src/registry/strategies/leases.js';

test('Lease spec rules: one valid and one invalid case each (field path and reason)', () => {
  const cases: [string, any, [string, string] | undefined][] = [
    [
      'node heartbeat lease',
      { holderIdentity: 'node-1', leaseDurationSeconds: 40, renewTime: '2025-01-01T00:00:00.000000Z' },
      undefined,
    ],
    ['leaseDurationSeconds 0', { leaseDurationSeconds: 0 }, ['spec.leaseDurationSeconds', 'FieldValueInvalid']],
    ['leaseTransitions 0', { leaseTransitions: 0 }, undefined],
    ['leaseTransitions -1', { leaseTransitions: -1 }, ['spec.leaseTransitions', 'FieldValueInvalid']],
    ['preferredHolder with a strategy', { preferredHolder: 'a', strategy: 'OldestEmulationVersion' }, undefined],
    ['preferredHolder without a strategy', { preferredHolder: 'a' }, ['spec.preferredHolder', 'FieldValueForbidden']],
  ];
  for (const [what, spec, want] of cases) {
    assert.deepEqual(
      validateLeaseSpec(spec).map((c) => [c.field, c.reason]),
      want ? [want] : [],
      what,
    );
  }
});
