/** Custom resource schemas in process: defaulting, value validation messages, compiled nodes for pruning. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from '../../../src/registry/crd/schema-defaults.js';
import {
  compileCustomSchema,
  rootSchema,
  validateCustom,
  withPlatExtensions,
} from '../../../src/registry/crd/structural.js';
import { validateFields } from '../../../src/schema/fields.js';
import { validateCRD } from '../../../src/registry/crd/crd-validation.js';

const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', default: 3, exclusiveMinimum: true, minimum: 0 },
        nested: { type: 'object', default: {}, properties: { mode: { type: 'string', default: 'fast' } } },
        list: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', properties: { v: { type: 'string', default: 'd' } } },
        },
        name: { type: 'string', minLength: 3, nullable: true },
        when: { type: 'string', format: 'date-time' },
        set: { type: 'array', 'x-plat-list-type': 'set', items: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 2 } },
      },
    },
  },
};

test('defaults fill absent fields under present parents, recursively and in list items', () => {
  const obj: any = { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'a' }, spec: { list: [{}, { v: 'set' }] } };
  applyDefaults(obj, SCHEMA);
  assert.deepEqual(obj.spec, { size: 3, nested: { mode: 'fast' }, list: [{ v: 'd' }, { v: 'set' }] });
  const none: any = { metadata: {} };
  applyDefaults(none, SCHEMA);
  assert.equal(none.spec, undefined);
});

test('value validation: upstream messages and field paths', () => {
  const causes = validateCustom(
    {
      metadata: { name: 'x' },
      spec: { size: 0, list: [], name: 'ab', when: 'yesterday', set: ['a', 'a'], labels: { k: 'long' } },
    },
    rootSchema(SCHEMA),
  );
  const byField = Object.fromEntries(causes.map((c) => [c.field, c.message]));
  assert.equal(byField['spec.size'], 'Invalid value: 0: spec.size in body should be greater than 0');
  assert.equal(byField['spec.list'], 'Invalid value: "[]": spec.list in body should have at least 1 items');
  assert.equal(byField['spec.name'], 'Invalid value: "ab": spec.name in body should be at least 3 chars long');
  assert.equal(
    byField['spec.when'],
    'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
  );
  assert.equal(byField['spec.set[1]'], 'Duplicate value: "a"');
  assert.equal(byField['spec.labels[k]'], 'Too long: may not be more than 2 bytes');
  assert.deepEqual(validateCustom({ spec: { name: null } }, rootSchema(SCHEMA)), []);
});

test('the compiled schema prunes unknown fields except where preserved', () => {
  const node = compileCustomSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { a: { type: 'string' }, free: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
      },
    },
  });
  const obj: any = {
    apiVersion: 'x/v1',
    kind: 'K',
    metadata: { name: 'n', bogus: 1 },
    spec: { a: 'x', b: 1, free: { deep: { z: 1 } } },
    top: 1,
  };
  const warnings = validateFields(obj, node, 'Warn');
  assert.deepEqual(obj, {
    apiVersion: 'x/v1',
    kind: 'K',
    metadata: { name: 'n' },
    spec: { a: 'x', free: { deep: { z: 1 } } },
  });
  assert.deepEqual(warnings.sort(), [
    'unknown field "metadata.bogus"',
    'unknown field "spec.b"',
    'unknown field "top"',
  ]);
});

test('x-kubernetes-* extensions count as x-plat-*; CRD schemas must be structural (one schema for all versions: reported under spec.validation, as upstream hoists it)', () => {
  assert.equal(
    withPlatExtensions({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })[
      'x-plat-preserve-unknown-fields'
    ],
    true,
  );
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
          schema: { openAPIV3Schema: { type: 'array', items: { type: 'string' } } },
        },
      ],
    },
  };
  assert.deepEqual(
    validateCRD(crd).map((c) => `${c.field}: ${c.message}`),
    ['spec.validation.openAPIV3Schema.type: Invalid value: "array": must be object at the root'],
  );
  crd.spec.versions[0]!.schema.openAPIV3Schema = {
    type: 'object',
    properties: { spec: { properties: { x: { 'x-kubernetes-int-or-string': true } } } },
  } as never;
  assert.deepEqual(
    validateCRD(crd).map((c) => c.field),
    ['spec.validation.openAPIV3Schema.properties[spec].type'],
  );
  crd.spec.versions[0]!.schema.openAPIV3Schema = {
    type: 'object',
    properties: { spec: null, list: { type: 'array', items: [] } },
  } as never;
  assert.deepEqual(
    validateCRD(crd).map((c) => `${c.field}: ${c.reason}`),
    [
      'spec.validation.openAPIV3Schema.properties[spec]: FieldValueInvalid',
      'spec.validation.openAPIV3Schema.properties[list].items: FieldValueForbidden',
    ],
  );
  crd.spec.versions[0]!.schema.openAPIV3Schema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { n: { type: 'integer', default: 'x' } } } },
  } as never;
  assert.deepEqual(
    validateCRD(crd).map((c) => `${c.field}: ${c.message}`),
    [
      'spec.validation.openAPIV3Schema.properties[spec].properties[n].default: Invalid value: "string": spec.n in body must be of type integer: "x"',
    ],
  );
});
