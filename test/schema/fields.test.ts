/**
 * validateFields with repeated keys (wording and order per decoder, Ignore/Warn/Strict) and
 * requiredCauses (schema-required fields, status and upstream-optional ones aside).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { schemaIndex, type SchemaNode } from '../../src/schema/schema.js';
import { validateFields, type DecodedAs } from '../../src/schema/fields.js';
import { requiredCauses } from '../../src/schema/required.js';
import { parseJsonNoting, type Duplicate } from '../../src/codec/duplicates.js';

const DEPLOYMENT = schemaIndex().forKind('apps', 'v1', 'Deployment');
const CONFIGMAP = schemaIndex().forKind('', 'v1', 'ConfigMap');

/** schema null: a kind without one */
function run(
  text: string,
  as: DecodedAs,
  mode: 'Ignore' | 'Warn' | 'Strict' = 'Warn',
  schema: SchemaNode | null = DEPLOYMENT!,
): { obj: any; out: string[] | string } {
  const duplicates: Duplicate[] = [];
  const obj = parseJsonNoting(text, duplicates);
  try {
    return { obj, out: validateFields(obj, schema ?? undefined, mode, { as, duplicates }) };
  } catch (e) {
    return { obj, out: (e as Error).message };
  }
}

const BODY =
  '{"metadata": {"name": "a", "name": "b"}, "spec": {"zz": 1, "paused": true, "paused": false, "unk": 1, "unk": 2}}';

test('typed JSON decode: repeats and unknown fields in document order; a repeated unknown field only as unknown', () => {
  const { obj, out } = run(BODY, 'object');
  assert.deepEqual(out, [
    'duplicate field "metadata.name"',
    'unknown field "spec.zz"',
    'duplicate field "spec.paused"',
    'unknown field "spec.unk"',
  ]);
  assert.deepEqual(obj, { metadata: { name: 'b' }, spec: { paused: false } });
});

test("patch decode: the patch's repeats first (all of them), then unknown fields sorted", () => {
  assert.deepEqual(run(BODY, 'patch').out, [
    'duplicate field "metadata.name"',
    'duplicate field "spec.paused"',
    'duplicate field "spec.unk"',
    'unknown field "spec.unk"',
    'unknown field "spec.zz"',
  ]);
});

test('Strict: one message listing everything; Ignore: nothing, values still last-wins', () => {
  assert.equal(
    run(BODY, 'object', 'Strict').out,
    'strict decoding error: duplicate field "metadata.name", unknown field "spec.zz", duplicate field "spec.paused", unknown field "spec.unk"',
  );
  const ignored = run(BODY, 'object', 'Ignore');
  assert.deepEqual(ignored.out, []);
  assert.equal(ignored.obj.spec.paused, false);
});

test('repeats in a map and in a kind without a schema are reported too', () => {
  assert.deepEqual(run('{"data": {"a": "1", "a": "2"}}', 'object', 'Warn', CONFIGMAP).out, [
    'duplicate field "data.a"',
  ]);
  assert.deepEqual(run('{"x": 1, "x": 2}', 'object', 'Warn', null).out, ['duplicate field "x"']);
});

test("JSON patch: only the operations' own repeated keys count", () => {
  assert.deepEqual(
    run('[{"op": "add", "op": "add", "path": "/a", "value": {"k": 1, "k": 2}}]', 'json-patch', 'Warn', null).out,
    ['json patch duplicate field "[0].op"'],
  );
});

test('YAML and apply wording: line messages; apply Strict fails at decoding', () => {
  const text = '{"data": {\n"a": "1",\n"a": "2"}, "bogus": 1}';
  assert.deepEqual(run(text, 'yaml', 'Warn', CONFIGMAP).out, [
    'line 3: key "a" already set in map',
    'unknown field "bogus"',
  ]);
  assert.equal(
    run(text, 'yaml', 'Strict', CONFIGMAP).out,
    'strict decoding error: yaml: unmarshal errors:\n  line 3: key "a" already set in map, unknown field "bogus"',
  );
  assert.equal(
    run(text, 'apply', 'Strict', CONFIGMAP).out,
    'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key "a" already set in map',
  );
});

const fieldsOf = (obj: unknown, group: string, version: string, kind: string) =>
  requiredCauses(obj, schemaIndex().forKind(group, version, kind)).map((c) => `${c.field}: ${c.message}`);

test('required: one cause per missing field, nested in lists and structs; null counts as missing', () => {
  const dep = {
    spec: {
      selector: null,
      template: { spec: { containers: [{ image: 'i', ports: [{}], env: [{ name: 'A' }, { value: 'v' }] }] } },
    },
  };
  assert.deepEqual(fieldsOf(dep, 'apps', 'v1', 'Deployment'), [
    'spec.selector: Required value',
    'spec.template.spec.containers[0].name: Required value',
    'spec.template.spec.containers[0].ports[0].containerPort: Required value',
    'spec.template.spec.containers[0].env[1].name: Required value',
  ]);
});

test('required: status is not checked; fields upstream accepts missing are not enforced; empty values are present', () => {
  assert.deepEqual(
    fieldsOf({ spec: { selector: {}, template: {} }, status: { conditions: [{}] } }, 'apps', 'v1', 'Deployment'),
    [],
  );
  assert.deepEqual(fieldsOf({ spec: { selector: {}, template: {} } }, 'apps', 'v1', 'StatefulSet'), []);
  assert.deepEqual(
    fieldsOf({ roleRef: { apiGroup: '', kind: 'Role', name: 'r' } }, 'rbac.authorization.plat.io', 'v1', 'RoleBinding'),
    [],
  );
  assert.deepEqual(fieldsOf({ metadata: { ownerReferences: [{ kind: 'X' }] } }, '', 'v1', 'ConfigMap'), [
    'metadata.ownerReferences[0].apiVersion: Required value',
    'metadata.ownerReferences[0].name: Required value',
    'metadata.ownerReferences[0].uid: Required value',
  ]);
});

test('a patched object: the subtrees it shares with the stored object by reference are not walked again; copies are', () => {
  // a stored node that (written by an older schema) still holds a field this one lacks: a
  // shared reference to it is what the stored object was checked as, a copy is checked anew
  const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i', old: 1 }] } };
  const stored = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template } };
  const shared = { ...stored, metadata: { ...stored.metadata }, spec: { ...stored.spec, replicas: 2, extra: 1 } };
  assert.deepEqual(validateFields(shared, DEPLOYMENT, 'Warn', { as: 'patch', duplicates: [] }, stored), [
    'unknown field "spec.extra"',
  ]);
  assert.equal(shared.spec.template, template);
  const copied = { ...shared, spec: { ...stored.spec, template: structuredClone(template) } };
  assert.deepEqual(validateFields(copied, DEPLOYMENT, 'Warn', { as: 'patch', duplicates: [] }, stored), [
    'unknown field "spec.template.spec.containers[0].old"',
  ]);
  // repeated keys being placed: everything is walked
  const again = { ...stored, metadata: { ...stored.metadata }, spec: { ...stored.spec } };
  const duplicates = [{ path: 'metadata.name', key: 'name', line: 1 }];
  assert.deepEqual(validateFields(again, DEPLOYMENT, 'Warn', { as: 'object', duplicates }, stored), [
    'duplicate field "metadata.name"',
    'unknown field "spec.template.spec.containers[0].old"',
  ]);
});
