/**
 * selectableFields (v1.32): field selectors on a custom resource's declared paths in lists and
 * watches, refused labels, the CRD's own checks, and x-kubernetes-selectable-fields in OpenAPI v3.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { waitEstablished } from './fixtures.js';

let s: TestServer;
const API = 'apiextensions.k8s.io';
const CRDS = `/apis/${API}/v1/customresourcedefinitions`;
const GROUP = 'select.example.com';
const SHIRTS = `/apis/${GROUP}/v1/namespaces/default/shirts`;

function shirtCRD(selectable: unknown[]): any {
  return {
    apiVersion: `${API}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `shirts.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'shirts', kind: 'Shirt' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          selectableFields: selectable,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    color: { type: 'string', enum: ['red', 'blue'] },
                    size: { type: 'integer' },
                    fit: { type: 'object' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

before(async () => {
  s = await startServer(['--api-domain', 'k8s.io']);
  const r = await request(s.url, 'POST', CRDS, shirtCRD([{ jsonPath: '.spec.color' }, { jsonPath: '.spec.size' }]));
  assert.equal(r.status, 201, r.text);
  await waitEstablished(s.url, `shirts.${GROUP}`, API);
  for (const [name, color, size] of [
    ['a', 'red', 1],
    ['b', 'blue', 2],
    ['c', 'red', 2],
  ] as const) {
    const c = await request(s.url, 'POST', SHIRTS, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Shirt',
      metadata: { name },
      spec: { color, size },
    });
    assert.equal(c.status, 201, c.text);
  }
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const names = async (q: string) =>
  (await request(s.url, 'GET', `${SHIRTS}?fieldSelector=${encodeURIComponent(q)}`)).json.items.map(
    (i: any) => i.metadata.name,
  );

test('lists select on the declared fields; other labels are 400', async () => {
  assert.deepEqual(await names('spec.color=red'), ['a', 'c']);
  assert.deepEqual(await names('spec.color=red,spec.size=2'), ['c']);
  assert.deepEqual(await names('spec.size!=2'), ['a']);
  assert.deepEqual(await names('metadata.name=b'), ['b']);
  const bad = await request(s.url, 'GET', `${SHIRTS}?fieldSelector=spec.fit=x`);
  assert.equal(bad.status, 400);
  assert.equal(bad.json.message, 'field label not supported: spec.fit');
});

test('watches select on the declared fields', async () => {
  const ac = new AbortController();
  const res = await fetch(`${s.url}${SHIRTS}?watch=true&fieldSelector=spec.color%3Dblue`, { signal: ac.signal });
  const reader = res.body!.getReader();
  let text = '';
  const deadline = Date.now() + 5000;
  while (!text.includes('"b"') && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  ac.abort();
  const events = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    events.map((e) => [e.type, e.object.metadata.name]),
    [['ADDED', 'b']],
  );
});

test('OpenAPI v3 publishes x-kubernetes-selectable-fields', async () => {
  const doc = (await request(s.url, 'GET', `/openapi/v3/apis/${GROUP}/v1`)).json;
  const def = Object.entries(doc.components.schemas).find(([k]) => k.endsWith('.v1.Shirt'))![1] as any;
  assert.deepEqual(def['x-kubernetes-selectable-fields'], [{ fieldPath: 'spec.color' }, { fieldPath: 'spec.size' }]);
});

test('a CRD whose selectable fields are not scalar fields of the schema is 422', async () => {
  const crd = shirtCRD([
    { jsonPath: '.spec.fit' },
    { jsonPath: '.spec.nope' },
    { jsonPath: '.spec.color' },
    { jsonPath: '.spec.color' },
    {},
  ]);
  crd.metadata.name = `pants.${GROUP}`;
  crd.spec.names = { plural: 'pants', kind: 'Pants' };
  const r = await request(s.url, 'POST', CRDS, crd);
  assert.equal(r.status, 422, r.text);
  assert.deepEqual(
    r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`),
    [
      'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.fit": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.versions[0].selectableFields[3].jsonPath: Duplicate value: ".spec.color"',
      'spec.versions[0].selectableFields[4].jsonPath: Required value',
    ],
  );
});
