/**
 * `__proto__`, `constructor` and `prototype` are ordinary keys (issue 26, item 4), over the real
 * listener: a merge or strategic patch cannot swap an object's prototype to hide a change from
 * validation (the immutable Secret, the RoleBinding's roleRef), map keys of those names survive
 * every decoder, every patch type and apply, in every response encoding, and managedFields
 * record exactly the fields that exist.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { decodeCbor, encodeCbor } from '../../src/codec/cbor.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';
import { parseYamlNoting } from '../../src/codec/duplicates.js';

const NS = '/api/v1/namespaces/default';
const RBAC = 'rbac.authorization.plat.io';
const PB = 'application/vnd.platform.protobuf';
const protobuf = new ProtobufCodec();
let s: TestServer;

before(async () => {
  s = await startServer(['--feature-gates', 'CBORServingAndStorage=true']);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

async function call(
  method: string,
  path: string,
  body: string | Uint8Array | undefined,
  type?: string,
  accept = 'application/json',
) {
  const res = await fetch(s.url + path, {
    method,
    headers: { ...(type ? { 'content-type': type } : {}), accept },
    body: body as BodyInit | undefined,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, bytes, text: Buffer.from(bytes).toString('utf8') };
}

/** The data keys a ConfigMap has, as own keys, in each response encoding. */
async function dataKeys(name: string): Promise<Record<string, string[]>> {
  const path = `${NS}/configmaps/${name}`;
  const json = JSON.parse((await call('GET', path, undefined)).text);
  const yaml = parseYamlNoting((await call('GET', path, undefined, undefined, 'application/yaml')).text) as {
    data: object;
  };
  const pb: any = protobuf.decodeObject((await call('GET', path, undefined, undefined, PB)).bytes);
  const cbor = decodeCbor((await call('GET', path, undefined, undefined, 'application/cbor')).bytes) as {
    data: object;
  };
  const keys = (o: { data?: object }) => Object.keys(o.data ?? {}).sort();
  return { json: keys(json), yaml: keys(yaml), protobuf: keys(pb), cbor: keys(cbor) };
}

const ALL = ['__proto__', 'a', 'constructor', 'prototype'];
const everywhere = (keys: string[]) => ({ json: keys, yaml: keys, protobuf: keys, cbor: keys });

test('the immutable Secret: a __proto__ key in a merge patch cannot hide removing its data (422, data unchanged)', async () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'locked' },
    immutable: true,
    data: { a: 'YQ==' },
  };
  assert.equal((await request(s.url, 'POST', `${NS}/secrets`, secret)).status, 201);
  for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
    const r = await call('PATCH', `${NS}/secrets/locked`, '{"data":null,"__proto__":{"data":{"a":"YQ=="}}}', type);
    assert.equal(r.status, 422, `${type}: ${r.text}`);
    assert.match(JSON.parse(r.text).message, /field is immutable when `immutable` is set/);
    assert.deepEqual((await request(s.url, 'GET', `${NS}/secrets/locked`)).json.data, { a: 'YQ==' });
  }
});

test('a RoleBinding cannot lose its roleRef behind a __proto__ key', async () => {
  const path = `/apis/${RBAC}/v1/namespaces/default/rolebindings`;
  const roleRef = { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' };
  assert.equal((await request(s.url, 'POST', path, { metadata: { name: 'rb' }, roleRef, subjects: [] })).status, 201);
  for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
    const r = await call(
      'PATCH',
      `${path}/rb`,
      JSON.stringify({ roleRef: null }).replace('}', `,"__proto__":{"roleRef":${JSON.stringify(roleRef)}}}`),
      type,
    );
    assert.equal(r.status, 422, `${type}: ${r.text}`);
    assert.deepEqual((await request(s.url, 'GET', `${path}/rb`)).json.roleRef, roleRef);
  }
  const created = await call(
    'POST',
    path,
    '{"metadata":{"name":"rb2"},"subjects":[],"__proto__":{"roleRef":{"apiGroup":"rbac.authorization.plat.io","kind":"ClusterRole","name":"view"}}}',
    'application/json',
  );
  assert.equal(created.status, 422, `a create without roleRef: ${created.text}`);
});

test('data keys named __proto__, constructor and prototype survive every request decoder', async () => {
  const cm = (name: string) =>
    JSON.parse(
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"1","__proto__":"p","constructor":"c","prototype":"t"}}`,
    );
  const yaml = (name: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  __proto__: p\n  constructor: c\n  prototype: t\n`;
  const bodies: [string, string | Uint8Array, string][] = [
    ['dec-json', JSON.stringify(cm('dec-json')), 'application/json'],
    ['dec-yaml', yaml('dec-yaml'), 'application/yaml'],
    ['dec-protobuf', protobuf.encodeObject(cm('dec-protobuf')), PB],
    ['dec-cbor', encodeCbor(cm('dec-cbor')), 'application/cbor'],
  ];
  for (const [name, body, type] of bodies) {
    const r = await call('POST', `${NS}/configmaps`, body, type);
    assert.equal(r.status, 201, `${type}: ${r.text}`);
    assert.deepEqual(await dataKeys(name), everywhere(ALL), type);
    const got = (await request(s.url, 'GET', `${NS}/configmaps/${name}`)).json;
    assert.deepEqual(Object.getOwnPropertyDescriptor(got.data, '__proto__')?.value, 'p', type);
  }
});

test('every patch type and apply add and remove data.__proto__ as an ordinary key', async () => {
  const apply = JSON.parse(
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME"},"data":{"a":"1","__proto__":"p","constructor":"c","prototype":"t"}}',
  );
  const applyYaml =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\ndata:\n  a: "1"\n  __proto__: p\n  constructor: c\n  prototype: t\n';
  const merge = '{"data":{"__proto__":"p","constructor":"c","prototype":"t"}}';
  const patches: [string, (name: string) => string | Uint8Array, string][] = [
    ['merge', () => merge, 'application/merge-patch+json'],
    ['strategic', () => merge, 'application/strategic-merge-patch+json'],
    [
      'json',
      () =>
        '[{"op":"add","path":"/data/__proto__","value":"p"},{"op":"add","path":"/data/constructor","value":"c"},{"op":"add","path":"/data/prototype","value":"t"}]',
      'application/json-patch+json',
    ],
    ['apply-yaml', (n) => applyYaml.replace('NAME', n), 'application/apply-patch+yaml'],
    ['apply-json', (n) => JSON.stringify(apply).replace('NAME', n), 'application/apply-patch+json'],
    ['apply-cbor', (n) => encodeCbor({ ...apply, metadata: { name: n } }), 'application/apply-patch+cbor'],
  ];
  for (const [label, body, type] of patches) {
    const name = `p-${label}`;
    assert.equal(
      (await request(s.url, 'POST', `${NS}/configmaps`, { metadata: { name }, data: { a: '1' } })).status,
      201,
    );
    const r = await call(
      'PATCH',
      `${NS}/configmaps/${name}?fieldManager=${label}${label.startsWith('apply') ? '&force=true' : ''}`,
      body(name),
      type,
    );
    assert.equal(r.status, 200, `${label}: ${r.text}`);
    assert.deepEqual(await dataKeys(name), everywhere(ALL), label);
    const removed = await call(
      'PATCH',
      `${NS}/configmaps/${name}`,
      '{"data":{"__proto__":null}}',
      'application/merge-patch+json',
    );
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(await dataKeys(name), everywhere(['a', 'constructor', 'prototype']), `${label}: removed`);
  }
});

test('managedFields record the __proto__ key a manager set, and no field that does not exist', async () => {
  const path = `${NS}/configmaps/owned?fieldManager=applier`;
  const r = await call(
    'PATCH',
    path,
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned"},"data":{"__proto__":"p"}}',
    'application/apply-patch+json',
  );
  assert.equal(r.status, 201, r.text);
  const m = await call(
    'PATCH',
    `${NS}/configmaps/owned?fieldManager=merger`,
    '{"data":{"constructor":"c"}}',
    'application/merge-patch+json',
  );
  assert.equal(m.status, 200, m.text);
  // a prototype's fields would be enumerated as the object's own by the field walk
  const g = await call(
    'PATCH',
    `${NS}/configmaps/owned?fieldManager=ghost`,
    '{"__proto__":{"binaryData":{"k":"YQ=="}}}',
    'application/merge-patch+json',
  );
  assert.equal(g.status, 200, g.text);
  assert.equal(JSON.parse(g.text).binaryData, undefined);
  const fields = Object.fromEntries(
    JSON.parse(g.text).metadata.managedFields.map((e: { manager: string; fieldsV1: unknown }) => [
      e.manager,
      JSON.stringify(e.fieldsV1),
    ]),
  );
  assert.deepEqual(fields, { applier: '{"f:data":{"f:__proto__":{}}}', merger: '{"f:data":{"f:constructor":{}}}' });
});

test("a Secret's stringData keys named __proto__ and constructor become data keys", async () => {
  const r = await call(
    'POST',
    `${NS}/secrets`,
    '{"metadata":{"name":"sd"},"stringData":{"__proto__":"x","constructor":"y"}}',
    'application/json',
  );
  assert.equal(r.status, 201, r.text);
  const got = JSON.parse((await call('GET', `${NS}/secrets/sd`, undefined)).text);
  assert.deepEqual(Object.entries(got.data).sort(), [
    ['__proto__', 'eA=='],
    ['constructor', 'eQ=='],
  ]);
});
