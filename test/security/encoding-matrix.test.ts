/**
 * The encoding matrix of the pre-write checks (issue 26, item 1): every guarded write × every
 * content type the server takes for it, over the real secure listener with CBOR on. The checks
 * that decide on the object a write would store — RBAC escalation (a ClusterRole granting `*`
 * on `*`), RBAC bind (a RoleBinding of cluster-admin), CertificateSigning (status.certificate
 * without `sign`), NodeRestriction (a node's restricted labels and taints on itself) — must
 * refuse with 403 whatever the body's encoding (JSON, YAML, Protobuf, CBOR) or patch type
 * (merge, JSON patch, strategic, apply as YAML, JSON or CBOR), and the object stays unchanged.
 * A harmless write by the same user is allowed, so the 403s are the checks' and not RBAC's.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { Pki, startAuthServer, type AuthServer } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { CSR_PATH, csrObject, makeRequest } from '../helpers/csr.js';
import { grant } from '../authz/helpers.js';
import { encodeCbor } from '../../src/codec/cbor.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';

const RBAC = 'rbac.authorization.plat.io';
const CRB = `/apis/${RBAC}/v1/clusterroles`;
const RB = `/apis/${RBAC}/v1/namespaces/team/rolebindings`;
const protobuf = new ProtobufCodec();
let pki: Pki;
let s: AuthServer;
let ca: Buffer;
let dir: string;
/** one TLS connection reused by the rows (a handshake per request is most of their cost) */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

type Encoded = { body: Buffer; type: string };
const BODIES: Record<string, (o: unknown) => Encoded> = {
  json: (o) => ({ body: Buffer.from(JSON.stringify(o)), type: 'application/json' }),
  yaml: (o) => ({ body: Buffer.from(toYaml(o)), type: 'application/yaml' }),
  protobuf: (o) => ({ body: Buffer.from(protobuf.encodeObject(o)), type: 'application/vnd.platform.protobuf' }),
  cbor: (o) => ({ body: Buffer.from(encodeCbor(o)), type: 'application/cbor' }),
};
const APPLY = '?fieldManager=matrix&force=true';
const PATCHES: Record<string, (t: Target) => Encoded> = {
  merge: (t) => ({ body: Buffer.from(JSON.stringify(t.merge)), type: 'application/merge-patch+json' }),
  'json patch': (t) => ({ body: Buffer.from(JSON.stringify(t.jsonPatch)), type: 'application/json-patch+json' }),
  strategic: (t) => ({ body: Buffer.from(JSON.stringify(t.merge)), type: 'application/strategic-merge-patch+json' }),
  'apply+yaml': (t) => ({ body: Buffer.from(toYaml(t.apply)), type: 'application/apply-patch+yaml' }),
  'apply+json': (t) => ({ body: Buffer.from(JSON.stringify(t.apply)), type: 'application/apply-patch+json' }),
  'apply+cbor': (t) => ({ body: Buffer.from(encodeCbor(t.apply)), type: 'application/apply-patch+cbor' }),
};

interface Target {
  label: string;
  token: string;
  /** the object's path as the plain port reads it */
  object: string;
  /** the path written (the object or its subresource) */
  write: string;
  /** the stored object with the guarded change, for PUT */
  full(stored: any): unknown;
  merge: unknown;
  jsonPatch: unknown;
  apply: unknown;
}

const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
const restricted = { 'node-restriction.platform.io/pool': 'gpu' };
const taints = [{ key: 'k', effect: 'NoSchedule' }];
const admin = { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' };
const subjects = [{ kind: 'User', apiGroup: RBAC, name: 'nsadmin' }];

const TARGETS = (): Target[] => [
  {
    label: 'clusterrole escalation',
    token: 'roler-token',
    object: `${CRB}/target`,
    write: `${CRB}/target`,
    full: (o) => ({ ...o, rules: everything }),
    merge: { rules: everything },
    jsonPatch: [{ op: 'add', path: '/rules', value: everything }],
    apply: { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name: 'target' }, rules: everything },
  },
  {
    label: 'rolebinding bind of cluster-admin',
    token: 'nsadmin-token',
    object: `${RB}/grab`,
    write: `${RB}/grab`,
    full: (o) => ({ ...o, subjects }),
    merge: { subjects },
    jsonPatch: [{ op: 'add', path: '/subjects', value: subjects }],
    apply: {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'grab', namespace: 'team' },
      roleRef: admin,
      subjects,
    },
  },
  {
    label: 'csr status.certificate without sign',
    token: 'eve-token',
    object: `${CSR_PATH()}/c1`,
    write: `${CSR_PATH()}/c1/status`,
    full: (o) => ({ ...o, status: { ...o.status, certificate: certificate() } }),
    merge: { status: { certificate: certificate() } },
    jsonPatch: [{ op: 'add', path: '/status/certificate', value: certificate() }],
    apply: {
      apiVersion: 'certificates.plat.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'c1' },
      status: { certificate: certificate() },
    },
  },
  {
    label: 'node restricted self-label',
    token: 'n1-token',
    object: '/api/v1/nodes/n1',
    write: '/api/v1/nodes/n1',
    full: (o) => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...restricted } } }),
    merge: { metadata: { labels: restricted } },
    jsonPatch: [{ op: 'add', path: '/metadata/labels/node-restriction.platform.io~1pool', value: 'gpu' }],
    apply: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: restricted } },
  },
  {
    label: 'node self-taint',
    token: 'n1-token',
    object: '/api/v1/nodes/n1',
    write: '/api/v1/nodes/n1',
    full: (o) => ({ ...o, spec: { ...o.spec, taints } }),
    merge: { spec: { taints } },
    jsonPatch: [{ op: 'add', path: '/spec', value: { taints } }],
    apply: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { taints } },
  },
];

const certificate = () => ca.toString('base64');

function send(method: string, path: string, token: string, e?: Encoded): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: 'application/json',
    ...(e ? { 'content-type': e.type } : {}),
  };
  return new Promise((done, fail) => {
    const req = httpsRequest(
      new URL(path, s.secureUrl),
      { method, headers, ca, agent, servername: 'localhost' },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => done({ status: res.statusCode!, text }));
      },
    );
    req.on('error', fail);
    req.end(e?.body);
  });
}

async function stored(path: string): Promise<any> {
  const r = await plain(s.url, 'GET', path);
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.json;
}

async function make(path: string, body: object): Promise<any> {
  const r = await plain(s.url, 'POST', path, body);
  assert.equal(r.status, 201, `${path}: ${r.text}`);
  return r.json;
}

before(async () => {
  pki = new Pki();
  dir = mkdtempSync(join(tmpdir(), 'enc-matrix-'));
  writeFileSync(
    pki.path('tokens.csv'),
    [
      'roler-token,roler,u1',
      'nsadmin-token,nsadmin,u2',
      'eve-token,eve,u3',
      'n1-token,system:node:n1,u4,"system:nodes"',
      '',
    ].join('\n'),
  );
  s = await startAuthServer([
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--authorization-mode',
    'Node,RBAC',
    '--enable-admission-plugins',
    'NodeRestriction',
    '--feature-gates',
    'CBORServingAndStorage=true',
  ]);
  ca = readFileSync(join(s.dataDir, 'pki', 'ca.crt'));
  await make('/api/v1/namespaces', { metadata: { name: 'team' } });
  await make(CRB, { metadata: { name: 'target' }, rules: [] });
  await grant(
    s.url,
    'roler',
    [{ apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: ['target'], verbs: ['get', 'update', 'patch'] }],
    ['system:authenticated'],
  );
  await make(RB, {
    metadata: { name: 'nsadmin' },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'admin' },
    subjects,
  });
  await make(RB, { metadata: { name: 'grab' }, roleRef: admin, subjects: [] });
  await grant(
    s.url,
    'eve',
    [
      { apiGroups: ['certificates.plat.io'], resources: ['certificatesigningrequests'], verbs: ['get'] },
      {
        apiGroups: ['certificates.plat.io'],
        resources: ['certificatesigningrequests/status'],
        verbs: ['update', 'patch'],
      },
    ],
    ['system:authenticated'],
  );
  await make(CSR_PATH(), csrObject('c1', makeRequest(dir, 'c1', '/CN=c1'), 'example.com/custom', ['client auth']));
  const csr = await stored(`${CSR_PATH()}/c1`);
  csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] };
  assert.equal((await plain(s.url, 'PUT', `${CSR_PATH()}/c1/approval`, csr)).status, 200);
  await make('/api/v1/nodes', { metadata: { name: 'n1', labels: { 'platform.io/hostname': 'n1' } } });
});
after(async () => {
  agent.destroy();
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends the write; returns a line describing a row that was not refused with 403. */
async function attempt(t: Target, row: string, method: string, path: string, e: Encoded): Promise<string | undefined> {
  const r = await send(method, path, t.token, e);
  return r.status === 403 ? undefined : `${t.label} / ${row}: ${r.status} ${r.text.slice(0, 200)}`;
}

test('every guarded write is refused whatever the encoding or patch type, the object unchanged', async () => {
  const wrong: string[] = [];
  let rows = 0;
  for (const t of TARGETS()) {
    const current = await stored(t.object);
    const rv = current.metadata.resourceVersion;
    for (const [name, encode] of Object.entries(BODIES)) {
      const w = await attempt(t, `PUT ${name}`, 'PUT', t.write, encode(t.full(current)));
      rows++;
      if (w) wrong.push(w);
    }
    for (const [name, encode] of Object.entries(PATCHES)) {
      const w = await attempt(
        t,
        `PATCH ${name}`,
        'PATCH',
        `${t.write}${name.startsWith('apply') ? APPLY : ''}`,
        encode(t),
      );
      rows++;
      if (w) wrong.push(w);
    }
    // refusals write nothing: the object is still at the version the rows started from
    if ((await stored(t.object)).metadata.resourceVersion !== rv) wrong.push(`${t.label}: the object changed`);
  }
  assert.equal(rows, 50);
  assert.deepEqual(wrong, []);
});

test('a RoleBinding of cluster-admin is not created in any encoding', async () => {
  const wrong: string[] = [];
  for (const [name, encode] of Object.entries(BODIES)) {
    const binding = {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `grab-${name}`, namespace: 'team' },
      roleRef: admin,
      subjects,
    };
    const r = await send('POST', RB, 'nsadmin-token', encode(binding));
    const got = await plain(s.url, 'GET', `${RB}/grab-${name}`);
    if (r.status !== 403 || got.status !== 404) wrong.push(`create ${name}: ${r.status}, stored ${got.status}`);
  }
  assert.deepEqual(wrong, []);
});

test("the same users may make writes the checks allow (the 403s are the checks')", async () => {
  const label = (v: string) => ({
    body: Buffer.from(
      encodeCbor({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'example.com/team': v } } }),
    ),
    type: 'application/apply-patch+cbor',
  });
  assert.equal(
    (await send('PATCH', `/api/v1/nodes/n1${APPLY}`, 'n1-token', label('a'))).status,
    200,
    'a node may set labels of other domains',
  );
  const role = { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name: 'target', labels: { a: 'b' } } };
  assert.equal(
    (
      await send('PATCH', `${CRB}/target${APPLY}`, 'roler-token', {
        body: Buffer.from(encodeCbor(role)),
        type: 'application/apply-patch+cbor',
      })
    ).status,
    200,
  );
  const view = {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'viewers', namespace: 'team' },
    roleRef: { ...admin, name: 'view' },
    subjects,
  };
  assert.equal((await send('POST', RB, 'nsadmin-token', BODIES.cbor!(view))).status, 201, 'binding a role one holds');
});
