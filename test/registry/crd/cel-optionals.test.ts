/**
 * CEL in CRD rules over the real listener: optional field selection and index (`.?f`,
 * `[?i]`) with the optional library (`orValue`, `hasValue`, `optional.of`), a rule that
 * selects an undefined field optionally refused at CRD write, and list equality as upstream
 * types the data: `x-kubernetes-list-type: set` lists equal in any order, `map` lists
 * matched by their keys, atomic lists in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { waitEstablished } from './fixtures.js';

let s: TestServer;
const API = 'apiextensions.k8s.io';
const CRDS = `/apis/${API}/v1/customresourcedefinitions`;
const GROUP = 'optionals.example.com';
const GS = `/apis/${GROUP}/v1/namespaces/default/gadgets`;

function gadgetCRD(rules: { rule: string; message: string }[], plural = 'gadgets'): any {
  const spec = {
    type: 'object',
    'x-kubernetes-validations': rules,
    properties: {
      limits: { type: 'object', properties: { min: { type: 'integer' }, max: { type: 'integer' } } },
      tags: { type: 'array', items: { type: 'string' } },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      zones: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      order: { type: 'array', items: { type: 'string' } },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, port: { type: 'integer' } },
        },
      },
      replicas: { type: 'integer' },
    },
  };
  const kind = plural === 'gadgets' ? 'Gadget' : 'Broken';
  return {
    apiVersion: `${API}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind },
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

const RULES = [
  { rule: 'self.?limits.?max.orValue(100) >= self.?limits.?min.orValue(0)', message: 'max must be >= min' },
  { rule: "self.?tags[?0].orValue('') != 'reserved'", message: 'the first tag may not be reserved' },
  { rule: "!self.?labels[?'tier'].hasValue() || self.labels.tier in ['a', 'b']", message: 'tier must be a or b' },
  { rule: 'self.?limits.?min == optional.none() || self.limits.min >= 0', message: 'min must not be negative' },
  { rule: '!has(oldSelf.zones) || self.zones == oldSelf.zones', message: 'zones are immutable' },
  { rule: '!has(oldSelf.ports) || self.ports == oldSelf.ports', message: 'ports are immutable' },
  { rule: '!has(oldSelf.order) || self.order == oldSelf.order', message: 'order is immutable' },
];

const gadget = (name: string, spec: Record<string, unknown>, rv?: string) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Gadget',
  metadata: { name, ...(rv ? { resourceVersion: rv } : {}) },
  spec,
});
const causes = (r: { json: any }) => r.json.details.causes.map((c: any) => `${c.reason} ${c.field}: ${c.message}`);

before(async () => {
  s = await startServer(['--api-domain', 'k8s.io']);
  const r = await request(s.url, 'POST', CRDS, gadgetCRD(RULES));
  assert.equal(r.status, 201, r.text);
  await waitEstablished(s.url, `gadgets.${GROUP}`, API);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('optional selection and index: absent fields take the orValue, present ones are checked', async () => {
  for (const [name, spec] of [
    ['empty', {}],
    ['min-only', { limits: { min: 50 } }],
    ['ok-tags', { tags: ['x', 'reserved'] }],
    ['tier', { labels: { tier: 'a' } }],
  ] as const) {
    const r = await request(s.url, 'POST', GS, gadget(name, spec));
    assert.equal(r.status, 201, `${name}: ${r.text}`);
  }
  const bad = [
    [{ limits: { min: 200 } }, 'FieldValueInvalid spec: Invalid value: "object": max must be >= min'],
    [{ limits: { min: 5, max: 2 } }, 'FieldValueInvalid spec: Invalid value: "object": max must be >= min'],
    [{ tags: ['reserved'] }, 'FieldValueInvalid spec: Invalid value: "object": the first tag may not be reserved'],
    [{ labels: { tier: 'c' } }, 'FieldValueInvalid spec: Invalid value: "object": tier must be a or b'],
    [{ limits: { min: -1 } }, 'FieldValueInvalid spec: Invalid value: "object": min must not be negative'],
  ] as const;
  for (const [spec, cause] of bad) {
    const r = await request(s.url, 'POST', GS, gadget('bad', spec));
    assert.equal(r.status, 422, r.text);
    assert.deepEqual([r.json.reason, causes(r)], ['Invalid', [cause]], JSON.stringify(spec));
  }
});

test('an optional selection of a field the schema does not have is refused at CRD write', async () => {
  const r = await request(
    s.url,
    'POST',
    CRDS,
    gadgetCRD([{ rule: 'self.?nope.orValue(1) == 1', message: 'x' }], 'brokens'),
  );
  assert.equal(r.status, 422, r.text);
  assert.equal(
    r.json.details.causes[0].field,
    'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
  );
  assert.match(r.json.details.causes[0].message, /compilation failed: ERROR: <input>:1:\d+: undefined field 'nope'/);
});

test('set lists compare in any order, map lists by key, atomic lists in order', async () => {
  const made = await request(
    s.url,
    'POST',
    GS,
    gadget('lists', {
      zones: ['a', 'b'],
      ports: [
        { name: 'http', port: 80 },
        { name: 'dns', port: 53 },
      ],
      order: ['x', 'y'],
      replicas: 1,
    }),
  );
  assert.equal(made.status, 201, made.text);
  // replicas changes too, so the rules on spec run (an unchanged spec would be ratcheted)
  const reordered = await request(
    s.url,
    'PUT',
    `${GS}/lists`,
    gadget(
      'lists',
      {
        zones: ['b', 'a'],
        ports: [
          { name: 'dns', port: 53 },
          { name: 'http', port: 80 },
        ],
        order: ['x', 'y'],
        replicas: 2,
      },
      made.json.metadata.resourceVersion,
    ),
  );
  assert.equal(reordered.status, 200, reordered.text);
  const rv = reordered.json.metadata.resourceVersion;
  const changed = await request(
    s.url,
    'PUT',
    `${GS}/lists`,
    gadget(
      'lists',
      {
        zones: ['b', 'c'],
        ports: [
          { name: 'dns', port: 54 },
          { name: 'http', port: 80 },
        ],
        order: ['y', 'x'],
        replicas: 3,
      },
      rv,
    ),
  );
  assert.equal(changed.status, 422, changed.text);
  assert.deepEqual(causes(changed), [
    'FieldValueInvalid spec: Invalid value: "object": zones are immutable',
    'FieldValueInvalid spec: Invalid value: "object": ports are immutable',
    'FieldValueInvalid spec: Invalid value: "object": order is immutable',
  ]);
});
