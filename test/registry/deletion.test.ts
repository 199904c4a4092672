/**
 * DeleteOptions from a decoded body (src/registry/deletion.ts toDeleteOptions), in process: a
 * field of the wrong JSON type is encoding/json's UnmarshalTypeError naming the Go field and type
 * (preconditions.uid is a types.UID, as metav1.Preconditions declares it), null and absent fields
 * are no fields, and well-typed options pass through. The end-to-end form (400 on DELETE and
 * DELETE collection) is http/limits "delete options of the wrong JSON type".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toDeleteOptions } from '../../src/registry/deletion.js';
import { StatusError } from '../../src/api/status.js';

function refused(body: Record<string, unknown>): string {
  try {
    toDeleteOptions(body);
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    assert.equal(e.status.code, 400);
    assert.equal(e.status.reason, 'BadRequest');
    return e.status.message ?? '';
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

const field = (v: string, path: string, type: string) =>
  `json: cannot unmarshal ${v} into Go struct field ${path} of type ${type}`;

test('a top-level field of the wrong JSON type names the DeleteOptions field and its Go type', () => {
  assert.equal(
    refused({ propagationPolicy: { a: [1] } }),
    field('object', 'DeleteOptions.propagationPolicy', 'v1.DeletionPropagation'),
  );
  assert.equal(refused({ orphanDependents: 'yes' }), field('string', 'DeleteOptions.orphanDependents', 'bool'));
  assert.equal(refused({ gracePeriodSeconds: '30' }), field('string', 'DeleteOptions.gracePeriodSeconds', 'int64'));
  assert.equal(refused({ gracePeriodSeconds: true }), field('bool', 'DeleteOptions.gracePeriodSeconds', 'int64'));
  assert.equal(refused({ preconditions: [1] }), field('array', 'DeleteOptions.preconditions', 'v1.Preconditions'));
  assert.equal(refused({ preconditions: 'x' }), field('string', 'DeleteOptions.preconditions', 'v1.Preconditions'));
  assert.equal(refused({ dryRun: 'All' }), field('string', 'DeleteOptions.dryRun', '[]string'));
  assert.equal(refused({ dryRun: {} }), field('object', 'DeleteOptions.dryRun', '[]string'));
  assert.equal(
    refused({ ignoreStoreReadErrorWithClusterBreakingPotential: 1 }),
    field('number', 'DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential', 'bool'),
  );
});

test('preconditions and dryRun items of the wrong type name the nested field', () => {
  assert.equal(refused({ preconditions: { uid: 7 } }), field('number', 'Preconditions.preconditions.uid', 'types.UID'));
  assert.equal(
    refused({ preconditions: { uid: ['u'] } }),
    field('array', 'Preconditions.preconditions.uid', 'types.UID'),
  );
  assert.equal(
    refused({ preconditions: { resourceVersion: [{ 0: '-a' }] } }),
    field('array', 'Preconditions.preconditions.resourceVersion', 'string'),
  );
  assert.equal(
    refused({ preconditions: { resourceVersion: false } }),
    field('bool', 'Preconditions.preconditions.resourceVersion', 'string'),
  );
  assert.equal(refused({ dryRun: [{ a: 1 }] }), field('object', 'DeleteOptions.dryRun', 'string'));
  assert.equal(refused({ dryRun: ['All', 3] }), field('number', 'DeleteOptions.dryRun', 'string'));
});

test('null and absent fields are no fields; well-typed options pass through', () => {
  assert.deepEqual(toDeleteOptions({}), {
    gracePeriodSeconds: undefined,
    preconditions: undefined,
    propagationPolicy: undefined,
    orphanDependents: undefined,
    dryRun: undefined,
  });
  const nulls = toDeleteOptions({
    propagationPolicy: null,
    orphanDependents: null,
    gracePeriodSeconds: null,
    preconditions: null,
    dryRun: null,
    ignoreStoreReadErrorWithClusterBreakingPotential: null,
  });
  assert.equal(nulls.preconditions, undefined);
  assert.equal(nulls.gracePeriodSeconds, undefined);
  assert.equal(nulls.dryRun, undefined);
  assert.deepEqual(toDeleteOptions({ preconditions: { uid: null, resourceVersion: null } }).preconditions, {
    uid: null,
    resourceVersion: null,
  });
  const full = toDeleteOptions({
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u-1', resourceVersion: '42' },
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
    ignoreStoreReadErrorWithClusterBreakingPotential: true,
  });
  assert.deepEqual(full, {
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u-1', resourceVersion: '42' },
    propagationPolicy: 'Foreground',
    orphanDependents: undefined,
    dryRun: ['All'],
    ignoreStoreReadErrorWithClusterBreakingPotential: true,
  });
  assert.equal(toDeleteOptions({ orphanDependents: false }).orphanDependents, false);
});
