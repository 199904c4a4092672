/**
 * The rule tree in process: runtime errors fail closed with upstream's wording, the per-call
 * cost limit stops a rule that would run too long (and the rules after it), property names
 * are escaped, and rules compile once per tree, not per evaluation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleTree, validateRules } from '../../../src/registry/crd/rules.js';
import { escapeName, unescapeName } from '../../../src/cel/escaping.js';

const tree = (spec: Record<string, unknown>) => ruleTree({ type: 'object', properties: { spec } })!;

test('a rule that errors at runtime fails closed with upstream wording (`no such key`); a false rule gives its message', () => {
  const t = tree({
    type: 'object',
    'x-plat-validations': [{ rule: 'self.free.b == 1' }, { rule: 'self.ios == 1', message: 'ios must be 1' }],
    properties: {
      free: { type: 'object', 'x-plat-preserve-unknown-fields': true },
      ios: { 'x-plat-int-or-string': true },
    },
  });
  assert.deepEqual(
    validateRules(t, { spec: { free: { a: 1 }, ios: 1 } }, undefined).map((c) => `${c.field}: ${c.message}`),
    ['spec: Invalid value: "object": no such key: b evaluating rule: self.free.b == 1'],
  );
  assert.deepEqual(
    validateRules(t, { spec: { free: { b: 1 }, ios: 'x' } }, undefined).map((c) => c.message),
    ['Invalid value: "object": ios must be 1'],
  );
});

test('the per-call cost limit stops an expensive evaluation and the rules after it', () => {
  const t = tree({
    type: 'object',
    'x-plat-validations': [
      { rule: 'self.l.all(x, self.l.all(y, x == y || x != y))' },
      { rule: 'self.l.size() == 0', message: 'never reached' },
    ],
    properties: { l: { type: 'array', items: { type: 'integer' } } },
  });
  const l = Array.from({ length: 1100 }, (_, i) => i);
  const out = validateRules(t, { spec: { l } }, undefined);
  assert.deepEqual(
    out.map((c) => `${c.field}: ${c.message}`),
    [
      'spec: Invalid value: "object": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, x == y || x != y))',
    ],
  );
  assert.deepEqual(
    validateRules(t, { spec: { l: [1, 2] } }, undefined).map((c) => c.message),
    ['Invalid value: "object": never reached'],
  );
});

test('property names are escaped as upstream: __dash__, __dot__, __slash__, __underscores__, reserved words', () => {
  assert.equal(escapeName('foo-bar'), 'foo__dash__bar');
  assert.equal(escapeName('a.b/c'), 'a__dot__b__slash__c');
  assert.equal(escapeName('x__y'), 'x__underscores__y');
  assert.equal(escapeName('namespace'), '__namespace__');
  assert.equal(escapeName('1abc'), undefined);
  assert.equal(unescapeName('foo__dash__bar'), 'foo-bar');
  const t = tree({
    type: 'object',
    'x-plat-validations': [{ rule: "self.foo__dash__bar == 'x' && self.__namespace__ == 'n'" }],
    properties: { 'foo-bar': { type: 'string' }, namespace: { type: 'string' } },
  });
  assert.deepEqual(validateRules(t, { spec: { 'foo-bar': 'x', namespace: 'n' } }, undefined), []);
  assert.equal(validateRules(t, { spec: { 'foo-bar': 'y', namespace: 'n' } }, undefined).length, 1);
});

test('rules at the root see apiVersion, kind and metadata.name', () => {
  const t = ruleTree({
    type: 'object',
    'x-plat-validations': [{ rule: "self.metadata.name.startsWith('ok-') && self.kind == 'W'", message: 'bad name' }],
    properties: { metadata: { type: 'object', properties: { name: { type: 'string' } } }, kind: { type: 'string' } },
  })!;
  assert.deepEqual(validateRules(t, { kind: 'W', metadata: { name: 'ok-1' } }, undefined), []);
  assert.deepEqual(
    validateRules(t, { kind: 'W', metadata: { name: 'no' } }, undefined).map((c) => `${c.field}|${c.message}`),
    ['|Invalid value: "object": bad name'],
  );
});

test('cost estimates follow upstream: enum-bounded strings, comparisons at the shorter size, cardinality under unbounded lists', async () => {
  const { ruleCauses } = await import('../../../src/registry/crd/rule-specs.js');
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          // a rule on each item of two nested unbounded lists: bounded by how many items fit in a request
          receivers: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                configs: {
                  type: 'array',
                  items: {
                    type: 'object',
                    'x-plat-validations': [{ rule: '!has(self.externalId) || has(self.roleArn)' }],
                    properties: { externalId: { type: 'string' }, roleArn: { type: 'string' } },
                  },
                },
              },
            },
          },
          listeners: {
            type: 'array',
            maxItems: 64,
            'x-plat-validations': [
              {
                rule: "self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || l.tls.mode == 'Terminate') : true)",
              },
            ],
            items: {
              type: 'object',
              properties: {
                protocol: { type: 'string', maxLength: 255 },
                tls: { type: 'object', properties: { mode: { type: 'string', enum: ['Terminate', 'Passthrough'] } } },
              },
            },
          },
        },
      },
    },
  };
  assert.deepEqual(ruleCauses(schema, 'spec.validation.openAPIV3Schema', 'x-kubernetes'), []);
});

test('schema patterns and CEL matches take RE2 syntax: inline flags, named groups', async () => {
  const { re2 } = await import('../../../src/cel/re2.js');
  assert.equal(re2('^(?i)(abort|warn)?$').test('WARN'), true);
  assert.equal(re2('^((?i)january|february)$').test('January'), true);
  assert.equal(re2('^(?P<y>\\d{4})$').test('2024'), true);
  assert.equal(re2('^[a-z\\-]+$').test('a-b'), true);
  assert.equal(re2('^[[:alpha:]]+$').test('abc'), true);
  const t = tree({
    type: 'object',
    'x-plat-validations': [{ rule: "self.s.matches('^(?i)yes$')" }],
    properties: { s: { type: 'string' } },
  });
  assert.deepEqual(validateRules(t, { spec: { s: 'YES' } }, undefined), []);
});

test('date, date-time and duration strings are timestamps and durations in rules; byte strings are bytes', async () => {
  const { ruleCauses } = await import('../../../src/registry/crd/rule-specs.js');
  const spec = {
    type: 'object',
    'x-plat-validations': [
      { rule: 'self.end > self.start && self.start.getFullYear() >= 2020', message: 'bad window' },
      { rule: "self.timeout <= duration('1h')", message: 'timeout too long' },
      { rule: 'size(self.data) == 3', message: 'data is 3 bytes' },
    ],
    properties: {
      start: { type: 'string', format: 'date-time' },
      end: { type: 'string', format: 'date' },
      timeout: { type: 'string', format: 'duration' },
      data: { type: 'string', format: 'byte' },
    },
  };
  const t = tree(spec);
  const ok = {
    start: '2024-05-01T10:00:00Z',
    end: '2024-06-01',
    timeout: '30m',
    data: Buffer.from('abc').toString('base64'),
  };
  assert.deepEqual(validateRules(t, { spec: ok }, undefined), []);
  assert.deepEqual(
    validateRules(
      t,
      { spec: { ...ok, start: '2019-01-01T00:00:00Z', timeout: '1h0m1s', data: 'YQ==' } },
      undefined,
    ).map((c) => c.message),
    [
      'Invalid value: "object": bad window',
      'Invalid value: "object": timeout too long',
      'Invalid value: "object": data is 3 bytes',
    ],
  );
  const bad = {
    type: 'object',
    properties: { spec: { ...spec, 'x-plat-validations': [{ rule: "self.start == '2024-01-01'" }] } },
  };
  assert.match(
    ruleCauses(bad, 'x', 'x-plat')[0]?.message ?? '',
    /found no matching overload for '_==_' applied to '\(google\.protobuf\.Timestamp, string\)'/,
  );
});

test('transition rules are refused where items cannot be correlated (under atomic and set lists); list-type map items can', async () => {
  const { ruleCauses } = await import('../../../src/registry/crd/rule-specs.js');
  const item = {
    type: 'object',
    'x-plat-validations': [{ rule: 'self.v == oldSelf.v' }],
    properties: { k: { type: 'string' }, v: { type: 'string' } },
  };
  const schema = (listType: string) => ({
    type: 'object',
    properties: {
      l: { type: 'array', maxItems: 5, 'x-plat-list-type': listType, 'x-plat-list-map-keys': ['k'], items: item },
    },
  });
  assert.deepEqual(ruleCauses(schema('map'), 'p', 'x-kubernetes'), []);
  assert.deepEqual(
    ruleCauses(schema('atomic'), 'p', 'x-kubernetes').map((c) => `${c.field}: ${c.message}`),
    [
      'p.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self.v == oldSelf.v": oldSelf cannot be used on the uncorrelatable portion of the schema within p.properties[l].items',
    ],
  );
});
