import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';
import { kubectlEnv } from '../helpers/kubectl.js';

const run = promisify(execFile);
const TABLE = 'application/json;as=Table;g=meta.plat.io;v=v1';
let s: TestServer;
let upstream: TestServer;
before(async () => {
  [s, upstream] = await Promise.all([startServer(), startServer(['--api-domain', 'k8s.io'])]);
});
after(async () => {
  await Promise.all([s.stop(), upstream.stop()]);
  s.cleanup();
  upstream.cleanup();
});

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

test('pods render with the columns kubectl shows, rows carry PartialObjectMetadata', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces/default/pods', pod('t1'));
  const r = await request(s.url, 'GET', '/api/v1/namespaces/default/pods', undefined, { accept: TABLE });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json;as=Table;g=meta.plat.io;v=v1');
  assert.equal(r.json.kind, 'Table');
  assert.equal(r.json.apiVersion, 'meta.plat.io/v1');
  assert.deepEqual(
    r.json.columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name),
    ['Name', 'Ready', 'Status', 'Restarts', 'Age'],
  );
  assert.deepEqual(r.json.rows[0].cells.slice(0, 4), ['t1', '0/1', 'Pending', '0']);
  assert.equal(r.json.rows[0].object.kind, 'PartialObjectMetadata');
  assert.equal(r.json.rows[0].object.metadata.name, 't1');
  assert.ok(r.json.metadata.resourceVersion);
});

test('Leases print Name, Holder and Age as upstream', async () => {
  await request(s.url, 'POST', '/apis/coordination.plat.io/v1/namespaces/default/leases', {
    metadata: { name: 'held' },
    spec: { holderIdentity: 'node-1' },
  });
  const r = await request(s.url, 'GET', '/apis/coordination.plat.io/v1/namespaces/default/leases/held', undefined, {
    accept: TABLE,
  });
  assert.deepEqual(
    r.json.columnDefinitions.map((c: any) => c.name),
    ['Name', 'Holder', 'Age'],
  );
  assert.deepEqual(r.json.rows[0].cells.slice(0, 2), ['held', 'node-1']);
});

test('kinds without columns get Name and Created At; includeObject None and Object', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces/default/limitranges', {
    metadata: { name: 'l1' },
    spec: { limits: [] },
  });
  const r = await request(s.url, 'GET', '/api/v1/namespaces/default/limitranges?includeObject=None', undefined, {
    accept: TABLE,
  });
  assert.deepEqual(
    r.json.columnDefinitions.map((c: any) => [c.name, c.type]),
    [
      ['Name', 'string'],
      ['Created At', 'date'],
    ],
  );
  assert.equal(r.json.rows[0].object, undefined);
  const o = await request(s.url, 'GET', '/api/v1/namespaces/default/limitranges/l1?includeObject=Object', undefined, {
    accept: TABLE,
  });
  assert.equal(o.json.rows[0].object.kind, 'LimitRange');
  const bad = await request(s.url, 'GET', '/api/v1/namespaces/default/limitranges?includeObject=All', undefined, {
    accept: TABLE,
  });
  assert.equal(bad.status, 400);
});

test('PartialObjectMetadataList and PartialObjectMetadata views', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('pom', { a: 'b' }));
  const l = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.plat.io;v=v1',
  });
  assert.equal(l.json.kind, 'PartialObjectMetadataList');
  // the same objects as the full list, each reduced to its metadata
  const full = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps');
  assert.ok(full.json.items.some((i: any) => i.metadata.name === 'pom'));
  assert.equal(l.json.items.length, full.json.items.length);
  assert.deepEqual(
    l.json.items,
    full.json.items.map((i: any) => ({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.plat.io/v1',
      metadata: i.metadata,
    })),
  );
  const g = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/pom', undefined, {
    accept: 'application/json;as=PartialObjectMetadata;g=meta.plat.io;v=v1',
  });
  assert.deepEqual(g.json.metadata.labels, { a: 'b' });
  assert.equal(g.json.data, undefined);
});

test('the fallback in Accept is honoured in order: an unserved Table group falls back to JSON', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces', undefined, {
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  });
  assert.equal(r.json.kind, 'NamespaceList');
  const only = await request(s.url, 'GET', '/api/v1/namespaces', undefined, {
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  });
  assert.equal(only.status, 406);
});

test('kubectl renders server-side tables with the upstream domain', async () => {
  const env = kubectlEnv(upstream);
  await request(upstream.url, 'POST', '/api/v1/namespaces/default/pods', pod('kp'));
  const pods = await run('/usr/bin/kubectl', ['--server', upstream.url, 'get', 'pods'], { env });
  assert.match(pods.stdout, /NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
  assert.match(pods.stdout, /kp\s+0\/1\s+Pending\s+0/);
  await run('/usr/bin/kubectl', ['--server', upstream.url, 'create', 'deployment', 'kd', '--image=nginx'], { env });
  const wide = await run('/usr/bin/kubectl', ['--server', upstream.url, 'get', 'deploy', '-o', 'wide'], { env });
  assert.match(wide.stdout, /CONTAINERS\s+IMAGES\s+SELECTOR/);
  assert.match(wide.stdout, /kd .*nginx\s+nginx\s+app=kd/);
  const ns = await run('/usr/bin/kubectl', ['--server', s.url, 'get', 'ns'], { env: kubectlEnv(s) });
  assert.match(ns.stdout, /default/);
});

test('kubectl renders the upstream columns of flow schemas, priority levels, cluster roles and service accounts', async () => {
  const env = kubectlEnv(upstream);
  const get = async (...args: string[]) =>
    (await run('/usr/bin/kubectl', ['--server', upstream.url, 'get', ...args], { env })).stdout;
  const created = await request(upstream.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
    metadata: { name: 'tbl-sa' },
    secrets: [{ name: 'tbl-token' }],
  });
  assert.equal(created.status, 201, created.text);

  const fs = await get('flowschemas');
  assert.match(fs, /^NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL$/m);
  assert.match(fs, /^exempt\s+exempt\s+1\s+<none>\s+\S+\s+\S+$/m);
  assert.match(fs, /^catch-all\s+catch-all\s+10000\s+ByUser\s+\S+\s+\S+$/m);
  // rows in matching order: the exempt schema (precedence 1) first, catch-all (10000) last
  const names = fs
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(/\s+/)[0]);
  assert.deepEqual([names[0], names.at(-1)], ['exempt', 'catch-all']);

  const pl = await get('prioritylevelconfigurations');
  assert.match(pl, /^NAME\s+TYPE\s+NOMINALCONCURRENCYSHARES\s+QUEUES\s+HANDSIZE\s+QUEUELENGTHLIMIT\s+AGE$/m);
  assert.match(pl, /^catch-all\s+Limited\s+5\s+<none>\s+<none>\s+<none>\s+\S+$/m);
  assert.match(pl, /^exempt\s+Exempt\s+<none>\s+<none>\s+<none>\s+<none>\s+\S+$/m);

  const roles = await get('clusterroles');
  assert.match(roles, /^NAME\s+CREATED AT$/m);
  assert.match(roles, /^cluster-admin\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);

  const sa = await get('sa', '-n', 'default');
  assert.match(sa, /^NAME\s+SECRETS\s+AGE$/m);
  assert.match(sa, /^tbl-sa\s+1\s+\d+s$/m);
});

test('Table on watch: the first event carries the column definitions, later ones rows only', async () => {
  const res = await fetch(
    `${s.url}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20&fieldSelector=metadata.name%3Dtw`,
    { headers: { accept: `${TABLE},application/json` } },
  );
  assert.equal(res.status, 200);
  await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('tw', {}, { a: '1' }));
  await request(s.url, 'PUT', '/api/v1/namespaces/default/configmaps/tw', configMap('tw', {}, { a: '1', b: '2' }));
  const events = await readLines(res, 2);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED'],
  );
  assert.ok(
    events.every(
      (e) => e.object.kind === 'Table' && e.object.apiVersion === 'meta.plat.io/v1' && e.object.rows.length === 1,
    ),
  );
  assert.deepEqual(
    events[0].object.columnDefinitions.map((c: any) => c.name),
    ['Name', 'Data', 'Age'],
  );
  assert.equal(events[1].object.columnDefinitions, null);
  assert.deepEqual(
    events.map((e) => e.object.rows[0].cells.slice(0, 2)),
    [
      ['tw', 1],
      ['tw', 2],
    ],
  );
  assert.equal(events[1].object.rows[0].object.kind, 'PartialObjectMetadata');
  assert.equal(events[1].object.metadata.resourceVersion, events[1].object.rows[0].object.metadata.resourceVersion);
});

test('Table in YAML; Protobuf has no Table (fallback in Accept order, else 406); PartialObjectMetadataList in Protobuf', async () => {
  // its own object to list: the test may run alone
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('pb-pom'))).status,
    201,
  );
  const y = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: 'application/yaml;as=Table;g=meta.plat.io;v=v1',
  });
  assert.equal(y.status, 200);
  assert.equal(y.headers.get('content-type'), 'application/yaml;as=Table;g=meta.plat.io;v=v1');
  assert.match(y.text, /^kind: Table\napiVersion: meta.plat.io\/v1\n/);
  const pbTable = 'application/vnd.platform.protobuf;as=Table;g=meta.plat.io;v=v1';
  const only = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: pbTable });
  assert.equal(only.status, 406);
  assert.equal(only.json.reason, 'NotAcceptable');
  assert.match(only.json.message, /application\/json, application\/yaml, application\/vnd.platform.protobuf/);
  const fallback = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: `${pbTable}, application/yaml, application/json`,
  });
  assert.equal(fallback.headers.get('content-type'), 'application/yaml');
  const pom = await fetch(`${s.url}/api/v1/namespaces/default/configmaps`, {
    headers: { accept: 'application/vnd.platform.protobuf;as=PartialObjectMetadataList;g=meta.plat.io;v=v1' },
  });
  assert.equal(
    pom.headers.get('content-type'),
    'application/vnd.platform.protobuf;as=PartialObjectMetadataList;g=meta.plat.io;v=v1',
  );
  const list: any = new ProtobufCodec().decodeObject(new Uint8Array(await pom.arrayBuffer()));
  assert.equal(list.kind, 'PartialObjectMetadataList');
  assert.ok(list.items.some((i: any) => i.metadata.name === 'pb-pom'));
  assert.ok(list.items.every((i: any) => i.metadata.name && i.data === undefined));
});

test('watch negotiation: YAML has no stream framing (406), q=0 ranges are ignored', async () => {
  const y = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', undefined, {
    accept: 'application/yaml',
  });
  assert.equal(y.status, 406);
  const q0 = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
    accept: 'application/yaml;q=0, application/json',
  });
  assert.equal(q0.headers.get('content-type'), 'application/json');
});

async function readLines(res: Response, want: number): Promise<any[]> {
  const reader = res.body!.getReader();
  let text = '';
  const lines = () => text.split('\n').filter((l) => l.trim());
  const deadline = Date.now() + 10_000;
  while (lines().length < want && Date.now() < deadline) {
    const r = await reader.read();
    if (r.done) break;
    text += Buffer.from(r.value).toString('utf8');
  }
  await reader.cancel();
  return lines().map((l) => JSON.parse(l));
}
