/**
 * The joined path keys of src/apply/fieldset.ts are interned (a cache of strings): the same
 * path is the same string however it was built, a key built after the table was reset (full)
 * is equal to one built before, and sets built on either side of a reset still agree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSet, fieldKey, fieldsOf, internedKeys, joinKey, resetInterned, SEP } from '../../src/apply/fieldset.js';
import { schemaIndex } from '../../src/schema/schema.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;

/** A string no table ever held (a fresh flat copy: `===` on strings compares content, this is about identity). */
const fresh = (s: string): string => Buffer.from(s).toString();

test('joinKey and fieldKey answer the joined string, the same one each time, from any prefix', () => {
  resetInterned();
  assert.equal(fieldKey('', 'spec'), 'f:spec');
  assert.equal(joinKey('', 'f:spec'), 'f:spec');
  const p = fieldKey(fieldKey('', 'spec'), 'template');
  assert.equal(p, `f:spec${SEP}f:template`);
  assert.equal(joinKey(p, 'k:{"name":"a"}'), `f:spec${SEP}f:template${SEP}k:{"name":"a"}`);
  // a prefix equal in content but another string object finds the same entries
  assert.equal(fieldKey(fresh(p), 'x'), fieldKey(p, 'x'));
  assert.ok(internedKeys() > 0);
});

test('a stored fieldsV1 parses into the keys the applied walk builds', () => {
  resetInterned();
  const applied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { app: 'x' } },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } },
  };
  const walked = fieldsOf(applied, deployment);
  const parsed = FieldSet.fromFieldsV1(walked.toFieldsV1());
  assert.ok(parsed.equals(walked));
  assert.deepEqual(parsed.paths().sort(), walked.paths().sort());
});

test('keys interned before a reset equal the ones after it; sets from both sides agree', () => {
  resetInterned();
  const applied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 1, paused: true, template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } },
  };
  const before = fieldsOf(applied, deployment);
  const beforeKey = fieldKey(fieldKey('', 'spec'), 'replicas');
  resetInterned();
  assert.equal(internedKeys(), 0);
  const after = fieldsOf(applied, deployment);
  assert.equal(fieldKey(fieldKey('', 'spec'), 'replicas'), beforeKey);
  assert.ok(before.equals(after) && after.equals(before));
  assert.ok(before.difference(after).empty() && after.difference(before).empty());
  assert.equal(before.intersection(after).size, before.size);
});

test('the table is bounded: it starts over when full, and keys stay right across the reset', () => {
  resetInterned();
  const keep = fieldKey('', 'keep');
  let peak = 0;
  for (let i = 0; i < 120_000; i++) {
    assert.equal(fieldKey('f:m', `k${i}`), `f:m${SEP}f:k${i}`);
    peak = Math.max(peak, internedKeys());
  }
  assert.ok(peak <= 20_000, `peak ${peak}`);
  assert.ok(internedKeys() < 120_000);
  assert.equal(fieldKey('', 'keep'), keep);
  resetInterned();
});
