import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Decoder } from 'cbor-x';
import { encodeCbor } from '../../src/codec/cbor.js';
import { startServer, request, type TestServer } from '../helpers/server.js';

const CBOR = 'application/cbor';
const cbor = new Decoder({ mapsAsObjects: true, useRecords: false });
let on: TestServer;
let off: TestServer;
before(async () => {
  [on, off] = await Promise.all([startServer(['--feature-gates', 'CBORServingAndStorage=true']), startServer()]);
});
after(async () => {
  await Promise.all([on.stop(), off.stop()]);
  on.cleanup();
  off.cleanup();
});

async function call(
  s: TestServer,
  method: string,
  path: string,
  body: Uint8Array | undefined,
  headers: Record<string, string>,
) {
  const res = await fetch(s.url + path, { method, headers, body: body as BodyInit | undefined });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

const cm = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});

test('CBOR request and response bodies: create, get, list (one self-described item each)', async () => {
  const c = await call(on, 'POST', '/api/v1/namespaces/default/configmaps', encodeCbor(cm('c1', { a: 'b' })), {
    'content-type': CBOR,
    accept: CBOR,
  });
  assert.equal(c.status, 201);
  assert.equal(c.type, CBOR);
  assert.deepEqual([...c.bytes.subarray(0, 3)], [0xd9, 0xd9, 0xf7]);
  const created = cbor.decode(c.bytes);
  assert.deepEqual([created.kind, created.metadata.name, created.data], ['ConfigMap', 'c1', { a: 'b' }]);
  const json = await request(on.url, 'GET', '/api/v1/namespaces/default/configmaps/c1');
  assert.deepEqual(
    cbor.decode((await call(on, 'GET', '/api/v1/namespaces/default/configmaps/c1', undefined, { accept: CBOR })).bytes),
    json.json,
  );
  const l = cbor.decode(
    (await call(on, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: CBOR })).bytes,
  );
  assert.equal(l.kind, 'ConfigMapList');
  assert.deepEqual(
    l.items.map((i: any) => i.metadata.name),
    ['c1'],
  );
  const bad = await call(on, 'POST', '/api/v1/namespaces/default/configmaps', Uint8Array.of(0xa1, 0x61), {
    'content-type': CBOR,
    accept: CBOR,
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.type, CBOR);
  assert.equal(cbor.decode(bad.bytes).reason, 'BadRequest');
});

test('server-side apply with application/apply-patch+cbor', async () => {
  const path = '/api/v1/namespaces/default/configmaps/applied?fieldManager=cbor-test';
  const a = await call(on, 'PATCH', path, encodeCbor(cm('applied', { x: '1' })), {
    'content-type': 'application/apply-patch+cbor',
    accept: CBOR,
  });
  assert.equal(a.status, 201);
  const obj = cbor.decode(a.bytes);
  assert.deepEqual(obj.data, { x: '1' });
  assert.equal(obj.metadata.managedFields[0].manager, 'cbor-test');
  assert.equal(obj.metadata.managedFields[0].operation, 'Apply');
  const m = await call(on, 'PATCH', '/api/v1/namespaces/default/configmaps/applied', encodeCbor({ data: { y: '2' } }), {
    'content-type': 'application/merge-patch+cbor',
  });
  assert.equal(m.status, 415);
});

test('watch as application/cbor-seq: one self-described event per item', async () => {
  // a binary stream with nothing to send yet sends its headers with the first event
  const pending = fetch(
    `${on.url}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20&fieldSelector=metadata.name%3Dcw`,
    { headers: { accept: CBOR } },
  );
  await request(on.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('cw', { v: '1' }));
  const res = await pending;
  await request(on.url, 'DELETE', '/api/v1/namespaces/default/configmaps/cw');
  assert.equal(res.headers.get('content-type'), 'application/cbor-seq');
  const reader = res.body!.getReader();
  let buf = Buffer.alloc(0);
  let events: any[] = [];
  const deadline = Date.now() + 10_000;
  while (events.length < 2 && Date.now() < deadline) {
    const r = await reader.read();
    if (r.done) break;
    buf = Buffer.concat([buf, r.value]);
    try {
      events = cbor.decodeMultiple(buf) as any[];
    } catch {
      /* an item split across reads */
    }
  }
  await reader.cancel();
  assert.deepEqual(
    events.map((e) => [e.type, e.object.kind, e.object.metadata.name]),
    [
      ['ADDED', 'ConfigMap', 'cw'],
      ['DELETED', 'ConfigMap', 'cw'],
    ],
  );
});

test('gate off: CBOR is an unknown type (406 for Accept, 415 for bodies), answered in JSON', async () => {
  const g = await call(off, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: CBOR });
  assert.equal(g.status, 406);
  const st = JSON.parse(Buffer.from(g.bytes).toString());
  assert.equal(st.reason, 'NotAcceptable');
  assert.doesNotMatch(st.message, /cbor/);
  const p = await call(off, 'POST', '/api/v1/namespaces/default/configmaps', encodeCbor(cm('x', {})), {
    'content-type': CBOR,
  });
  assert.equal(p.status, 415);
  assert.equal(JSON.parse(Buffer.from(p.bytes).toString()).reason, 'UnsupportedMediaType');
  const apply = await call(
    off,
    'PATCH',
    '/api/v1/namespaces/default/configmaps/x?fieldManager=m',
    encodeCbor(cm('x', {})),
    { 'content-type': 'application/apply-patch+cbor' },
  );
  assert.equal(apply.status, 415);
  const fallback = await call(off, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: `${CBOR}, application/json`,
  });
  assert.equal(fallback.type, 'application/json');
});

test('415 with a Protobuf Accept is a Protobuf Status; 406 lists CBOR when the gate is on', async () => {
  const r = await call(on, 'POST', '/api/v1/namespaces/default/configmaps', new TextEncoder().encode('x'), {
    'content-type': 'text/csv',
    accept: 'application/vnd.platform.protobuf',
  });
  assert.equal(r.status, 415);
  assert.equal(r.type, 'application/vnd.platform.protobuf');
  assert.deepEqual([...r.bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  const n = await request(on.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'text/csv' });
  assert.equal(n.status, 406);
  assert.equal(
    n.json.message,
    'only the following media types are accepted: application/json, application/yaml, application/vnd.platform.protobuf, application/cbor',
  );
});
