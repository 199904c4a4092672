/**
 * Parsed field sets per object version (src/apply/managed-fields.ts storedSet): a stored
 * object's fieldsV1 trees are parsed once, and later writes over the same version, or over
 * a version whose entries a write left alone, reuse the sets; the stored object itself is
 * never changed (the store shares its managedFields with apply), and the result is the same
 * as over a fresh copy. Objects of one shape share one rendered tree (a tree never changes once written).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, recordUpdate } from '../../src/apply/managed-fields.js';
import { FieldSet } from '../../src/apply/fieldset.js';
import { schemaIndex } from '../../src/schema/schema.js';
import { deployerBody, scalerBody } from '../../bench/scenarios/apply.js';
import { deepFreeze } from '../../src/api/deep-freeze.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;
const target = { kind: 'Deployment', group: 'apps', name: 'd' };

/** Counts the fieldsV1 trees parsed while fn runs. */
function parses(fn: () => void): number {
  const original = FieldSet.fromFieldsV1;
  let n = 0;
  FieldSet.fromFieldsV1 = (tree) => {
    n++;
    return original.call(FieldSet, tree);
  };
  try {
    fn();
  } finally {
    FieldSet.fromFieldsV1 = original;
  }
  return n;
}

const applyAs = (live: any, manager: 'deployer' | 'autoscaler', k: number, now: string) =>
  apply(
    live,
    JSON.parse(manager === 'deployer' ? deployerBody('d', k) : scalerBody('d', k)),
    deployment,
    manager,
    'apps/v1',
    now,
    manager === 'autoscaler',
    target,
  );

test("the two managers alternating: each version's trees are parsed at most once, stored objects never change", () => {
  let live = deepFreeze(applyAs(undefined, 'deployer', 0, '2026-01-01T00:00:00Z'));
  live = deepFreeze(applyAs(live, 'autoscaler', 1, '2026-01-01T00:00:01Z'));
  // the first write over this version parses its two trees; later ones over it parse none
  assert.ok(parses(() => applyAs(live, 'deployer', 2, '2026-01-01T00:00:02Z')) <= 2);
  assert.equal(
    parses(() => applyAs(live, 'deployer', 2, '2026-01-01T00:00:02Z')),
    0,
  );
  // the next versions: the entries each write made or kept come with their sets
  for (let k = 2; k < 8; k++) {
    const manager = k % 2 ? 'autoscaler' : 'deployer';
    let next: any;
    assert.equal(
      parses(() => {
        next = applyAs(live, manager, k, `2026-01-01T00:00:0${k}Z`);
      }),
      0,
      `apply ${k} (${manager})`,
    );
    live = deepFreeze(next);
  }
  // an update over the stored version (sending no managedFields: the stored ones stay) reuses them as well
  const updated = structuredClone(live);
  updated.spec.replicas = 42;
  delete updated.metadata.managedFields;
  assert.equal(
    parses(() => recordUpdate(updated, live, deployment, 'kubectl-edit', 'apps/v1', '2026-01-01T00:01:00Z')),
    0,
  );
});

test('over the stored object or over a fresh copy, apply writes the same object', () => {
  let live = applyAs(undefined, 'deployer', 0, '2026-01-01T00:00:00Z');
  for (let k = 1; k < 6; k++) {
    const manager = k % 2 ? 'autoscaler' : 'deployer';
    const now = `2026-01-01T00:00:0${k}Z`;
    const shared = applyAs(deepFreeze(live), manager, k, now);
    const fresh = applyAs(JSON.parse(JSON.stringify(live)), manager, k, now);
    assert.equal(JSON.stringify(shared), JSON.stringify(fresh), `apply ${k} (${manager})`);
    live = shared;
  }
  // Apply entries by time: the deployer applied last at :04, the autoscaler at :05
  assert.deepEqual(
    live.metadata.managedFields.map((e: any) => e.manager),
    ['deployer', 'autoscaler'],
  );
});

test("creates of one shape share one rendered tree; a later write of one of them leaves the other's alone", () => {
  const configMap = schemaIndex().forKind('', 'v1', 'ConfigMap')!;
  const cm = (name: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { bench: 'create' } },
    data: { pad: name },
  });
  const a: any = cm('a');
  const b: any = cm('b');
  recordUpdate(a, undefined, configMap, 'wrk', 'v1', '2026-01-01T00:00:00Z');
  recordUpdate(b, undefined, configMap, 'wrk', 'v1', '2026-01-01T00:00:00Z');
  const tree = b.metadata.managedFields[0].fieldsV1;
  assert.equal(a.metadata.managedFields[0].fieldsV1, tree, 'one tree for both');
  const rendered = JSON.stringify(tree);
  assert.equal(rendered, '{"f:data":{".":{},"f:pad":{}},"f:metadata":{"f:labels":{".":{},"f:bench":{}}}}');
  const a2: any = structuredClone(a);
  delete a2.metadata.managedFields;
  a2.data.more = 'x';
  recordUpdate(a2, deepFreeze(a), configMap, 'wrk', 'v1', '2026-01-01T00:00:01Z');
  assert.equal(
    JSON.stringify(a2.metadata.managedFields[0].fieldsV1),
    '{"f:data":{".":{},"f:more":{},"f:pad":{}},"f:metadata":{"f:labels":{".":{},"f:bench":{}}}}',
  );
  assert.equal(JSON.stringify(b.metadata.managedFields[0].fieldsV1), rendered, 'the shared tree is unchanged');
});
