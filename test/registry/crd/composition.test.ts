/**
 * Structural schema completeness: allOf / anyOf / oneOf / not as value validations,
 * uniqueItems refused in CRDs, list-type map key uniqueness (Duplicate value), minProperties,
 * multipleOf, exclusive bounds, defaults in list items and under nullable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileDefaults } from '../../../src/registry/crd/schema-defaults.js';
import { rootSchema, validateCustom, withPlatExtensions } from '../../../src/registry/crd/structural.js';
import { validateCRD } from '../../../src/registry/crd/crd-validation.js';

const check = (spec: Record<string, unknown>, obj: Record<string, unknown>) =>
  validateCustom({ spec: obj }, rootSchema(withPlatExtensions({ type: 'object', properties: { spec } }))).map(
    (c) => `${c.reason} ${c.field}: ${c.message}`,
  );

test("oneOf: exactly one alternative must hold, with the closest alternative's causes", () => {
  const spec = { type: 'object', properties: { mode: { type: 'string', oneOf: [{ enum: ['a'] }, { enum: ['b'] }] } } };
  assert.deepEqual(check(spec, { mode: 'a' }), []);
  assert.deepEqual(check(spec, { mode: 'c' }), [
    'FieldValueInvalid spec.mode: Invalid value: "null": "spec.mode" must validate one and only one schema (oneOf). Found none valid',
    'FieldValueNotSupported spec.mode: Unsupported value: "c": supported values: "a"',
  ]);
  const both = {
    type: 'object',
    oneOf: [{ required: ['a'] }, { required: ['b'] }],
    properties: { a: { type: 'string' }, b: { type: 'string' } },
  };
  assert.deepEqual(check(both, { a: 'x' }), []);
  assert.deepEqual(check(both, { a: 'x', b: 'y' }), [
    'FieldValueInvalid spec: Invalid value: "null": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives',
  ]);
});

test('anyOf, allOf and not', () => {
  const spec = {
    type: 'object',
    properties: {
      n: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 0 }] },
      s: { type: 'string', allOf: [{ minLength: 2 }, { pattern: '^a' }] },
      t: { type: 'string', not: { enum: ['forbidden'] } },
    },
  };
  assert.deepEqual(check(spec, { n: 11, s: 'ab', t: 'ok' }), []);
  assert.deepEqual(check(spec, { n: 5, s: 'b', t: 'forbidden' }), [
    'FieldValueInvalid spec.n: Invalid value: "null": "spec.n" must validate at least one schema (anyOf)',
    'FieldValueInvalid spec.n: Invalid value: 5: spec.n in body should be greater than or equal to 10',
    'FieldValueInvalid spec.s: Invalid value: "null": "spec.s" must validate all the schemas (allOf)',
    'FieldValueInvalid spec.s: Invalid value: "b": spec.s in body should be at least 2 chars long',
    'FieldValueInvalid spec.s: Invalid value: "b": spec.s in body should match \'^a\'',
    'FieldValueInvalid spec.t: Invalid value: "null": "spec.t" must not validate the schema (not)',
  ]);
});

test('list-type map keys are unique; minProperties, multipleOf, exclusive bounds', () => {
  const spec = {
    type: 'object',
    minProperties: 1,
    properties: {
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name', 'protocol'],
        items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string' } } },
      },
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      step: { type: 'integer', multipleOf: 5 },
      ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
    },
  };
  assert.deepEqual(
    check(spec, {
      ports: [
        { name: 'a', protocol: 'TCP' },
        { name: 'a', protocol: 'UDP' },
      ],
      step: 10,
      ratio: 0.5,
    }),
    [],
  );
  assert.deepEqual(
    check(spec, {
      ports: [
        { name: 'a', protocol: 'TCP' },
        { name: 'a', protocol: 'TCP' },
      ],
      tags: ['x', 'x'],
      step: 7,
      ratio: 1,
    }),
    [
      'FieldValueDuplicate spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"}',
      'FieldValueDuplicate spec.tags[1]: Duplicate value: "x"',
      'FieldValueInvalid spec.step: Invalid value: 7: spec.step in body should be a multiple of 5',
      'FieldValueInvalid spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1',
    ],
  );
  assert.deepEqual(check(spec, {}), [
    'FieldValueInvalid spec: Invalid value: "{}": spec in body should have at least 1 properties',
  ]);
});

test('a CRD with uniqueItems: true is refused', () => {
  const crd = {
    metadata: { name: 'ws.a.io' },
    spec: {
      group: 'a.io',
      scope: 'Cluster',
      names: { plural: 'ws', kind: 'W' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { l: { type: 'array', uniqueItems: true, items: { type: 'string' } } },
            },
          },
        },
      ],
    },
  };
  assert.deepEqual(
    validateCRD(crd).map((c) => `${c.field}: ${c.message}`),
    [
      'spec.validation.openAPIV3Schema.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ],
  );
});

test('defaults apply inside list items, and to null only where the field is not nullable', () => {
  const d = compileDefaults({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { w: { type: 'integer', default: 1 } } } },
          a: { type: 'string', default: 'x' },
          b: { type: 'string', nullable: true, default: 'y' },
        },
      },
    },
  });
  const obj: any = { spec: { items: [{}, { w: 3 }], a: null, b: null } };
  d(obj);
  assert.deepEqual(obj.spec, { items: [{ w: 1 }, { w: 3 }], a: 'x', b: null });
});
