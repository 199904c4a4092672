/**
 * CRD validation rules end to end under --api-domain k8s.io (x-kubernetes-validations):
 * rules on create and update with upstream's Status causes (code, reason, field, message),
 * transition rules with oldSelf, optionalOldSelf, messageExpression, reason and fieldPath,
 * rules in list items; CRDs whose rules do not compile or cost too much are 422 naming the
 * rule; tightening a schema does not block unrelated edits of stored objects (ratcheting).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/poll.js';
import { waitEstablished } from './fixtures.js';

let s: TestServer;
const API = 'apiextensions.k8s.io';
const CRDS = `/apis/${API}/v1/customresourcedefinitions`;
const GROUP = 'rules.example.com';
const WS = `/apis/${GROUP}/v1/namespaces/default/widgets`;

function widgetCRD(): any {
  const spec = {
    type: 'object',
    'x-kubernetes-validations': [
      { rule: 'self.min <= self.max', message: 'min must be <= max' },
      {
        rule: '!has(self.legacy)',
        fieldPath: '.legacy',
        reason: 'FieldValueForbidden',
        message: 'legacy is no longer supported',
      },
      { rule: 'self.replicas <= 5', messageExpression: "'replicas ' + string(self.replicas) + ' is more than 5'" },
    ],
    properties: {
      min: { type: 'integer' },
      max: { type: 'integer' },
      replicas: { type: 'integer', default: 1 },
      legacy: { type: 'string' },
      name: {
        type: 'string',
        maxLength: 63,
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }],
      },
      counter: {
        type: 'integer',
        'x-kubernetes-validations': [
          { rule: 'oldSelf.hasValue() || self > 0', optionalOldSelf: true, message: 'counter starts above 0' },
        ],
      },
      memory: {
        type: 'string',
        maxLength: 20,
        'x-kubernetes-validations': [
          {
            rule: "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))",
            message: 'memory must be a quantity under 1Gi',
          },
        ],
      },
      ports: {
        type: 'array',
        maxItems: 10,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          'x-kubernetes-validations': [{ rule: 'self.port >= 1024 || self.name.startsWith("priv-")' }],
          properties: { name: { type: 'string', maxLength: 20 }, port: { type: 'integer' } },
        },
      },
      note: { type: 'string' },
    },
  };
  return {
    apiVersion: `${API}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  };
}

const widget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name },
  spec,
});
const causes = (r: { json: any }) => r.json.details.causes.map((c: any) => `${c.reason} ${c.field}: ${c.message}`);

before(async () => {
  s = await startServer(['--api-domain', 'k8s.io']);
  const r = await request(s.url, 'POST', CRDS, widgetCRD());
  assert.equal(r.status, 201, r.text);
  await waitEstablished(s.url, `widgets.${GROUP}`, API);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('a rule that fails is 422 Invalid with the rule message on the field path; a valid object is created', async () => {
  const bad = await request(s.url, 'POST', WS, widget('w1', { min: 5, max: 1, counter: 1 }));
  assert.equal(bad.status, 422, bad.text);
  assert.equal(bad.json.reason, 'Invalid');
  assert.equal(
    bad.json.message,
    'Widget.rules.example.com "w1" is invalid: spec: Invalid value: "object": min must be <= max',
  );
  assert.deepEqual(causes(bad), ['FieldValueInvalid spec: Invalid value: "object": min must be <= max']);
  const ok = await request(
    s.url,
    'POST',
    WS,
    widget('w1', { min: 1, max: 5, name: 'a', counter: 1, memory: '512Mi', ports: [{ name: 'http', port: 8080 }] }),
  );
  assert.equal(ok.status, 201, ok.text);
});

test('reason and fieldPath, messageExpression, rules in list items, libraries', async () => {
  const r = await request(
    s.url,
    'POST',
    WS,
    widget('w2', {
      min: 1,
      max: 2,
      legacy: 'x',
      replicas: 7,
      counter: 1,
      memory: '2Gi',
      ports: [
        { name: 'http', port: 8080 },
        { name: 'ssh', port: 22 },
      ],
    }),
  );
  assert.equal(r.status, 422, r.text);
  assert.deepEqual(causes(r).sort(), [
    'FieldValueForbidden spec.legacy: Forbidden: legacy is no longer supported',
    'FieldValueInvalid spec.memory: Invalid value: "string": memory must be a quantity under 1Gi',
    'FieldValueInvalid spec.ports[1]: Invalid value: "object": failed rule: self.port >= 1024 || self.name.startsWith("priv-")',
    'FieldValueInvalid spec: Invalid value: "object": replicas 7 is more than 5',
  ]);
});

test('transition rules: oldSelf on update only; optionalOldSelf rules also run on create', async () => {
  const zero = await request(s.url, 'POST', WS, widget('w3', { min: 1, max: 1, name: 'first', counter: 0 }));
  assert.equal(zero.status, 422, zero.text);
  assert.deepEqual(causes(zero), ['FieldValueInvalid spec.counter: Invalid value: "integer": counter starts above 0']);
  assert.equal(
    (await request(s.url, 'POST', WS, widget('w3', { min: 1, max: 1, name: 'first', counter: 2 }))).status,
    201,
  );
  const renamed = await request(
    s.url,
    'PATCH',
    `${WS}/w3`,
    { spec: { name: 'second' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(renamed.status, 422, renamed.text);
  assert.deepEqual(causes(renamed), ['FieldValueInvalid spec.name: Invalid value: "string": name is immutable']);
  const other = await request(
    s.url,
    'PATCH',
    `${WS}/w3`,
    { spec: { counter: 0, max: 3 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(other.status, 200, other.text);
});

test('a CRD whose rule does not compile, or may cost too much, is 422 naming the rule', async () => {
  const crd = widgetCRD();
  crd.metadata.name = `gizmos.${GROUP}`;
  crd.spec.names = { plural: 'gizmos', kind: 'Gizmo' };
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  spec['x-kubernetes-validations'] = [
    { rule: 'self.nope > 1' },
    { rule: 'self.min' },
    { rule: 'self.min == "a"', reason: 'Bogus' },
  ];
  spec.properties.tags = {
    type: 'array',
    items: { type: 'string' },
    'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x.contains(y)))' }],
  };
  const r = await request(s.url, 'POST', CRDS, crd);
  assert.equal(r.status, 422, r.text);
  const at = 'spec.validation.openAPIV3Schema.properties[spec]';
  assert.deepEqual(causes(r), [
    `FieldValueInvalid ${at}.x-kubernetes-validations[0].rule: Invalid value: "self.nope > 1": compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^`,
    `FieldValueInvalid ${at}.x-kubernetes-validations[1].rule: Invalid value: "self.min": cel expression must evaluate to a bool`,
    `FieldValueInvalid ${at}.x-kubernetes-validations[2].rule: Invalid value: "self.min == \\"a\\"": compilation failed: ERROR: <input>:1:10: found no matching overload for '_==_' applied to '(int, string)'\n | self.min == "a"\n | .........^`,
    `FieldValueNotSupported ${at}.x-kubernetes-validations[2].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    `FieldValueForbidden ${at}.properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    `FieldValueForbidden ${at}.properties[tags].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    'FieldValueForbidden spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
  ]);
  // bounded, the same rule installs
  spec['x-kubernetes-validations'] = [];
  spec.properties.tags.maxItems = 10;
  spec.properties.tags.items.maxLength = 10;
  assert.equal((await request(s.url, 'POST', CRDS, crd)).status, 201);
});

test('ratcheting: a tightened schema does not block edits that leave the offending value alone', async () => {
  assert.equal(
    (
      await request(
        s.url,
        'POST',
        WS,
        widget('old', { min: 1, max: 1, name: 'a-rather-long-name', counter: 1, note: 'x' }),
      )
    ).status,
    201,
  );
  const crd = (await request(s.url, 'GET', `${CRDS}/widgets.${GROUP}`)).json;
  const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  props.name.maxLength = 5;
  props.note['x-kubernetes-validations'] = [{ rule: 'self.size() > 3', message: 'note too short' }];
  assert.equal((await request(s.url, 'PUT', `${CRDS}/widgets.${GROUP}`, crd)).status, 200);
  const merge = { 'content-type': 'application/merge-patch+json' };
  // once the new schema is served, a new object with the old values is refused
  await until(
    async () =>
      (await request(s.url, 'POST', WS, widget('new', { min: 1, max: 1, name: 'a-rather-long-name', counter: 1 })))
        .status === 422
        ? true
        : undefined,
    'the tightened schema',
  );
  const edit = await request(s.url, 'PATCH', `${WS}/old`, { spec: { max: 2 } }, merge);
  assert.equal(edit.status, 200, edit.text);
  const touch = await request(s.url, 'PATCH', `${WS}/old`, { spec: { note: 'y' } }, merge);
  assert.equal(touch.status, 422, touch.text);
  assert.deepEqual(causes(touch), ['FieldValueInvalid spec.note: Invalid value: "string": note too short']);
});
