import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { kubectlEnv } from '../helpers/kubectl.js';

const run = promisify(execFile);
const codec = new ProtobufCodec();
let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

async function raw(method: string, path: string, body: Uint8Array | undefined, headers: Record<string, string>) {
  const res = await fetch(s.url + path, { method, headers, body: body as BodyInit | undefined });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

test('Protobuf request body creates; Protobuf response round-trips to the same object', async () => {
  const body = codec.encodeObject({
    ...configMap('pb1', { a: 'b' }, { k: 'v' }),
    metadata: { name: 'pb1', namespace: 'default', labels: { a: 'b' } },
  });
  const c = await raw('POST', '/api/v1/namespaces/default/configmaps', body, {
    'content-type': PROTOBUF_MEDIA_TYPE,
    accept: PROTOBUF_MEDIA_TYPE,
  });
  assert.equal(c.status, 201);
  assert.equal(c.type, PROTOBUF_MEDIA_TYPE);
  assert.deepEqual([...c.bytes.slice(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  const created = codec.decodeObject(c.bytes);
  assert.equal(created.kind, 'ConfigMap');
  assert.deepEqual(created.data, { k: 'v' });
  const json = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/pb1');
  assert.deepEqual(
    codec.decodeObject(
      (await raw('GET', '/api/v1/namespaces/default/configmaps/pb1', undefined, { accept: PROTOBUF_MEDIA_TYPE })).bytes,
    ),
    json.json,
  );
});

test('Protobuf list response; Protobuf then JSON in Accept serves Protobuf; unknown type only is 406', async () => {
  // its own object, so the test does not depend on the create test before it (it runs alone too)
  const made = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'pb-list' },
    data: { k: 'v' },
  });
  assert.equal(made.status, 201);
  const l = await raw('GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: `${PROTOBUF_MEDIA_TYPE}, application/json`,
  });
  assert.equal(l.status, 200);
  const list = codec.decodeObject(l.bytes);
  assert.equal(list.kind, 'ConfigMapList');
  assert.ok((list.items as any[]).some((i: any) => i.metadata.name === 'pb-list'));
  const bad = await raw('GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: 'application/vnd.other.protobuf',
  });
  assert.equal(bad.status, 406);
});

test('garbage Protobuf body is 400, nothing written', async () => {
  const r = await raw('POST', '/api/v1/namespaces/default/configmaps', new Uint8Array([1, 2, 3, 4, 5]), {
    'content-type': PROTOBUF_MEDIA_TYPE,
  });
  assert.equal(r.status, 400);
  assert.equal(JSON.parse(new TextDecoder().decode(r.bytes)).reason, 'BadRequest');
});

test('kubectl generators (Protobuf bodies) work: create configmap, create deployment', async () => {
  const env = kubectlEnv(s);
  await run('/usr/bin/kubectl', ['--server', s.url, 'create', 'configmap', 'kpb', '--from-literal=x=y'], { env });
  const cm = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/kpb');
  assert.deepEqual(cm.json.data, { x: 'y' });
  await run('/usr/bin/kubectl', ['--server', s.url, 'create', 'deployment', 'kpd', '--image=nginx', '--replicas=2'], {
    env,
  });
  const d = await request(s.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/kpd');
  assert.equal(d.json.spec.replicas, 2);
});
