/**
 * A Protobuf client written here with protobufjs straight from reference/proto-descriptor.json
 * (not the server's codec): it creates, gets, lists and watches Pods, reading the watch stream's
 * length-prefixed frames.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { startServer, request, type TestServer } from '../helpers/server.js';

const PB = 'application/vnd.platform.protobuf';
const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);
const root = protobuf.Root.fromJSON(
  JSON.parse(readFileSync(new URL('../../../reference/proto-descriptor.json', import.meta.url), 'utf8')),
);
const type = (name: string) => root.lookupType(`plat.io.${name}`);
const Unknown = type('apimachinery.pkg.runtime.Unknown');
const WatchEvent = type('apimachinery.pkg.apis.meta.v1.WatchEvent');
const Status = type('apimachinery.pkg.apis.meta.v1.Status');
const Pod = type('api.core.v1.Pod');
const PodList = type('api.core.v1.PodList');

/** magic + Unknown{typeMeta, raw = the message} */
function envelope(apiVersion: string, kind: string, t: protobuf.Type, msg: object): Uint8Array {
  const raw = t.encode(t.fromObject(msg)).finish();
  const unknown = Unknown.encode({ typeMeta: { apiVersion, kind }, raw }).finish();
  return Buffer.concat([MAGIC, unknown]);
}

function open(bytes: Uint8Array): { kind: string; apiVersion: string; raw: Uint8Array } {
  assert.deepEqual([...bytes.subarray(0, 4)], [...MAGIC]);
  const u = Unknown.decode(bytes.subarray(4)) as any;
  return { kind: u.typeMeta.kind, apiVersion: u.typeMeta.apiVersion, raw: u.raw };
}

const podMessage = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

async function call(method: string, path: string, body?: Uint8Array) {
  const headers: Record<string, string> = { accept: PB };
  if (body) headers['content-type'] = PB;
  const res = await fetch(s.url + path, { method, headers, body: body as BodyInit | undefined });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** Reads frames from a streaming response until `want` of them arrived or the deadline passed. */
async function readFrames(res: Response, want: number, ms = 10_000): Promise<any[]> {
  const reader = res.body!.getReader();
  const events: any[] = [];
  let buf = new Uint8Array(0);
  const deadline = Date.now() + ms;
  while (events.length < want && Date.now() < deadline) {
    const timer = new Promise<'timeout'>((done) =>
      setTimeout(() => done('timeout'), Math.max(1, deadline - Date.now())),
    );
    const r = await Promise.race([reader.read(), timer]);
    if (r === 'timeout' || r.done) break;
    buf = Buffer.concat([buf, r.value]);
    while (buf.length >= 4) {
      const len = new DataView(buf.buffer, buf.byteOffset).getUint32(0, false);
      if (buf.length < 4 + len) break;
      const ev = WatchEvent.decode(buf.subarray(4, 4 + len)) as any;
      const obj = open(ev.object.raw);
      events.push({
        type: ev.type,
        kind: obj.kind,
        apiVersion: obj.apiVersion,
        object: obj.kind === 'Status' ? Status.decode(obj.raw) : obj.kind === 'Pod' ? Pod.decode(obj.raw) : obj.raw,
      });
      buf = buf.subarray(4 + len);
    }
  }
  await reader.cancel().catch(() => {});
  return events;
}

test('create and get Pods in Protobuf; the list is a PodList message', async () => {
  const c = await call('POST', '/api/v1/namespaces/default/pods', envelope('v1', 'Pod', Pod, podMessage('pw1')));
  assert.equal(c.status, 201);
  assert.equal(c.type, PB);
  const created = open(c.bytes);
  assert.deepEqual([created.kind, created.apiVersion], ['Pod', 'v1']);
  const pod = Pod.decode(created.raw) as any;
  assert.equal(pod.metadata.name, 'pw1');
  assert.ok(pod.metadata.uid);
  assert.equal(pod.spec.containers[0].image, 'nginx');

  const g = Pod.decode(open((await call('GET', '/api/v1/namespaces/default/pods/pw1')).bytes).raw) as any;
  assert.equal(g.metadata.uid, pod.metadata.uid);
  const l = await call('GET', '/api/v1/namespaces/default/pods');
  const list = open(l.bytes);
  assert.equal(list.kind, 'PodList');
  const items = (PodList.decode(list.raw) as any).items;
  assert.deepEqual(
    items.map((i: any) => i.metadata.name),
    ['pw1'],
  );
});

test('watch: synthetic ADDED first, then live ADDED, MODIFIED and DELETED frames', async () => {
  // a namespace and a stored pod of its own for the synthetic ADDED (it runs alone too)
  const PODS = '/api/v1/namespaces/pb-watch/pods';
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'pb-watch' } })).status, 201);
  assert.equal((await call('POST', PODS, envelope('v1', 'Pod', Pod, podMessage('pw1')))).status, 201);
  const res = await fetch(`${s.url}${PODS}?watch=1&timeoutSeconds=20`, {
    headers: { accept: PB },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), `${PB};stream=watch`);
  const reading = readFrames(res, 4);
  assert.equal((await call('POST', PODS, envelope('v1', 'Pod', Pod, podMessage('pw2')))).status, 201);
  const patched = await request(
    s.url,
    'PATCH',
    `${PODS}/pw2`,
    { metadata: { labels: { a: 'b' } } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200);
  assert.equal((await call('DELETE', `${PODS}/pw2`)).status, 200);
  const events = await reading;
  assert.deepEqual(
    events.map((e) => [e.type, e.kind, e.object.metadata.name]),
    [
      ['ADDED', 'Pod', 'pw1'],
      ['ADDED', 'Pod', 'pw2'],
      ['MODIFIED', 'Pod', 'pw2'],
      ['DELETED', 'Pod', 'pw2'],
    ],
  );
  assert.deepEqual(events[2].object.metadata.labels, { a: 'b' });
});

test('watch from a resourceVersion with no events yet: headers come with the first frame', async () => {
  const l = await call('GET', '/api/v1/namespaces/default/pods');
  const rv = (PodList.decode(open(l.bytes).raw) as any).metadata.resourceVersion;
  // fetch resolves on the headers, which a quiet binary stream sends with its first event
  const pending = fetch(`${s.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=20`, {
    headers: { accept: PB },
  });
  await call('POST', '/api/v1/namespaces/default/pods', envelope('v1', 'Pod', Pod, podMessage('pw3')));
  const events = await readFrames(await pending, 1);
  assert.deepEqual(
    events.map((e) => [e.type, e.object.metadata.name]),
    [['ADDED', 'pw3']],
  );
});

test('watchers sharing Protobuf get identical bytes; a JSON watcher of the same type still gets JSON lines', async () => {
  const url = `${s.url}/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=20&fieldSelector=metadata.name%3Dpw4`;
  const j = await fetch(url, { headers: { accept: 'application/json' } });
  // the selector matches nothing yet: the JSON stream opened with its filler, the binary ones
  // send their headers with the first frame, so their fetches resolve only after the create
  assert.equal(j.headers.get('content-type'), 'application/json');
  const firstFrame = async () => {
    const reader = (await fetch(url, { headers: { accept: PB } })).body!.getReader();
    const first = await reader.read();
    await reader.cancel();
    return Buffer.from(first.value ?? new Uint8Array(0));
  };
  const raws = Promise.all([firstFrame(), firstFrame()]);
  // whether a watcher registers before or after the create, it sees pw4 ADDED (live or
  // synthetic), the same object encoded the same way
  await call('POST', '/api/v1/namespaces/default/pods', envelope('v1', 'Pod', Pod, podMessage('pw4')));
  const [ra, rb] = await raws;
  assert.ok(ra.length > 4);
  assert.ok(ra.equals(rb));
  const text = await readJsonLines(j, 1);
  assert.equal(text[0].object.metadata.name, 'pw4');
});

async function readJsonLines(res: Response, want: number): Promise<any[]> {
  const reader = res.body!.getReader();
  let text = '';
  const deadline = Date.now() + 10_000;
  while (text.split('\n').filter((l) => l.trim()).length < want && Date.now() < deadline) {
    const r = await reader.read();
    if (r.done) break;
    text += Buffer.from(r.value).toString('utf8');
  }
  await reader.cancel();
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

test('a Protobuf Status answers errors of Protobuf requests; Protobuf body with a JSON response works', async () => {
  const missing = await call('GET', '/api/v1/namespaces/default/pods/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.type, PB);
  const st = open(missing.bytes);
  assert.equal(st.kind, 'Status');
  const status = Status.decode(st.raw) as any;
  assert.deepEqual([status.reason, status.code], ['NotFound', 404]);

  const mixed = await fetch(`${s.url}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    headers: { 'content-type': PB, accept: 'application/json' },
    body: envelope('v1', 'Pod', Pod, podMessage('pw5')) as BodyInit,
  });
  assert.equal(mixed.status, 201);
  assert.equal(mixed.headers.get('content-type'), 'application/json');
  assert.equal((await mixed.json()).metadata.name, 'pw5');
});

test('watch errors in Protobuf: a bad selector is a Protobuf 400 Status, an expired version one ERROR frame (410)', async () => {
  const bad = await call('GET', '/api/v1/namespaces/default/pods?watch=1&labelSelector=a%20in%20(', undefined);
  assert.equal(bad.status, 400);
  assert.equal(bad.type, PB);
  assert.equal((Status.decode(open(bad.bytes).raw) as any).reason, 'BadRequest');

  const short = await startServer(['--watch-history-window', '1s']);
  try {
    const from = (await request(short.url, 'GET', '/api/v1/namespaces/default/pods')).json.metadata.resourceVersion;
    await request(short.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'later' },
      data: {},
    });
    // the change after `from` leaves the 1 s window with time: poll (bounded) for the ERROR frame
    const deadline = Date.now() + 8000;
    let events: any[] = [];
    while (Date.now() < deadline) {
      const res = await fetch(
        `${short.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${from}&timeoutSeconds=1`,
        { headers: { accept: PB } },
      );
      events = await readFrames(res, 1, 3000);
      if (events[0]?.type === 'ERROR') break;
      await new Promise((done) => setTimeout(done, 100));
    }
    assert.equal(events[0]?.type, 'ERROR');
    assert.equal(events[0].kind, 'Status');
    assert.deepEqual([events[0].object.code, events[0].object.reason], [410, 'Expired']);
  } finally {
    await short.stop();
    short.cleanup();
  }
});
