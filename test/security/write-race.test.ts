/**
 * Check-then-write race (issue 18 item 3): escalation prevention and NodeRestriction check the
 * object a patch would store; the write must store exactly that object. One loop toggles an
 * annotation while another JSON-patches a `copy` from it into the guarded field; every stored
 * version (each is the reply of exactly one write) must stay within what the checks allow.
 * The same for admission (a ValidatingAdmissionPolicy), which also checks a preview.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const G = 'rbac.authorization.plat.io';
const ROLES = `/apis/${G}/v1/namespaces/work/roles`;
/** each race runs at most this long and this many writes per loop */
const RACE_MS = 3_000;
const RACE_WRITES = 400;

let s: AuthServer;
let pki: Pki;
let tls: TlsClient;

before(async () => {
  pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), 'alice-token,alice,uid-a\nn1-token,system:node:n1,uid-1,system:nodes\n');
  s = await startAuthServer([
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--authorization-mode',
    'Node,RBAC',
    '--enable-admission-plugins',
    'NodeRestriction',
  ]);
  // kept-alive connections: the loops race on writes, not on TLS handshakes
  tls = {
    ca: readFileSync(`${s.dataDir}/pki/ca.crt`),
    agent: new Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: readFileSync(`${s.dataDir}/pki/ca.crt`),
      servername: 'localhost',
    }),
  };
  const make = async (path: string, body: object) => {
    const r = await plain(s.url, 'POST', path, body);
    assert.equal(r.status, 201, `${path}: ${r.text}`);
  };
  await make('/api/v1/namespaces', { metadata: { name: 'work' } });
  // alice may patch roles and read configmaps in "work"; she holds nothing on secrets
  await make(ROLES, {
    metadata: { name: 'alice' },
    rules: [
      { apiGroups: [G], resources: ['roles'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
    ],
  });
  await make(`/apis/${G}/v1/namespaces/work/rolebindings`, {
    metadata: { name: 'alice' },
    roleRef: { apiGroup: G, kind: 'Role', name: 'alice' },
    subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }],
  });
  await make(ROLES, {
    metadata: { name: 'target', annotations: { a: 'configmaps' } },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  });
  await make('/api/v1/nodes', { metadata: { name: 'n1', annotations: { keep: 'x' } } });
});

after(async () => {
  tls?.agent?.destroy();
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

/** Runs the loops side by side, each bounded in time and count; returns every 2xx reply body. */
async function race(loops: (() => Promise<{ status: number; json: any }>)[]): Promise<any[]> {
  const stored: any[] = [];
  const deadline = Date.now() + RACE_MS;
  await Promise.all(
    loops.map(async (write) => {
      for (let i = 0; i < RACE_WRITES && Date.now() < deadline; i++) {
        const r = await write();
        if (r.status < 300) stored.push(r.json);
        else assert.ok(r.status === 403 || r.status === 409, `unexpected ${r.status}: ${JSON.stringify(r.json)}`);
      }
    }),
  );
  return stored;
}

test('RBAC: a copy into rules[0].resources[0] racing an annotation toggle never stores more than its author holds', async () => {
  const as = (method: string, body: unknown, type: string) =>
    request(s.secureUrl, tls, method, `${ROLES}/target`, body, {
      authorization: 'Bearer alice-token',
      'content-type': type,
    });
  let flip = 0;
  const toggle = () =>
    as(
      'PATCH',
      { metadata: { annotations: { a: flip++ % 2 ? 'configmaps' : 'secrets' } } },
      'application/merge-patch+json',
    );
  const copy = () =>
    as(
      'PATCH',
      [{ op: 'copy', from: '/metadata/annotations/a', path: '/rules/0/resources/0' }],
      'application/json-patch+json',
    );
  const stored = await race([toggle, toggle, copy, copy]);
  const last = await plain(s.url, 'GET', `${ROLES}/target`);
  const granted = [...stored, last.json].flatMap((o) =>
    (o.rules ?? []).flatMap((r: { resources?: string[] }) => r.resources ?? []),
  );
  assert.ok(stored.length > 0, 'some writes succeeded');
  assert.ok(!granted.includes('secrets'), 'a stored Role granted secrets');
});

test('NodeRestriction: a copy of annotations into labels racing a toggle never stores a node-restriction label', async () => {
  const as = (body: unknown, type: string) =>
    request(s.secureUrl, tls, 'PATCH', '/api/v1/nodes/n1', body, {
      authorization: 'Bearer n1-token',
      'content-type': type,
    });
  let flip = 0;
  const key = 'node-restriction.platform.io/pool';
  const toggle = () =>
    as({ metadata: { annotations: { [key]: flip++ % 2 ? null : 'gpu' } } }, 'application/merge-patch+json');
  const copy = () =>
    as([{ op: 'copy', from: '/metadata/annotations', path: '/metadata/labels' }], 'application/json-patch+json');
  const stored = await race([toggle, toggle, copy, copy]);
  const last = await plain(s.url, 'GET', '/api/v1/nodes/n1');
  assert.ok(
    stored.some((o) => o.metadata?.labels?.keep === 'x'),
    'some copies succeeded',
  );
  for (const o of [...stored, last.json])
    assert.equal(o.metadata?.labels?.[key], undefined, 'a stored Node carried a node-restriction label');
});

test('admission: a policy checked on the preview holds for the stored object under the same race', async () => {
  const AR = '/apis/admissionregistration.plat.io/v1';
  const CM = '/api/v1/namespaces/work/configmaps';
  const made = async (path: string, body: object) => assert.equal((await plain(s.url, 'POST', path, body)).status, 201);
  await made(`${AR}/validatingadmissionpolicies`, {
    metadata: { name: 'no-bad' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
        ],
      },
      validations: [{ expression: '!has(object.data) || !("k" in object.data) || object.data.k != "bad"' }],
    },
  });
  await made(`${AR}/validatingadmissionpolicybindings`, {
    metadata: { name: 'no-bad' },
    spec: { policyName: 'no-bad', validationActions: ['Deny'] },
  });
  await made(CM, { metadata: { name: 'c', annotations: { a: 'good' } }, data: { k: 'good' } });
  // the policy is in force once a direct bad write is refused
  await until(
    async () =>
      (
        await plain(s.url, 'PATCH', `${CM}/c`, '{"data":{"k":"bad"}}', {
          'content-type': 'application/merge-patch+json',
        })
      ).status === 422
        ? true
        : undefined,
    'the policy in force',
  );
  let flip = 0;
  const toggle = () =>
    plain(
      s.url,
      'PATCH',
      `${CM}/c`,
      JSON.stringify({ metadata: { annotations: { a: flip++ % 2 ? 'good' : 'bad' } } }),
      { 'content-type': 'application/merge-patch+json' },
    );
  const copy = () =>
    plain(
      s.url,
      'PATCH',
      `${CM}/c`,
      JSON.stringify([{ op: 'copy', from: '/metadata/annotations/a', path: '/data/k' }]),
      { 'content-type': 'application/json-patch+json' },
    );
  const stored: any[] = [];
  const deadline = Date.now() + RACE_MS;
  await Promise.all(
    [toggle, toggle, copy, copy].map(async (write) => {
      for (let i = 0; i < RACE_WRITES && Date.now() < deadline; i++) {
        const r = await write();
        if (r.status < 300) stored.push(r.json);
        else assert.ok(r.status === 422 || r.status === 409, `unexpected ${r.status}: ${r.text}`);
      }
    }),
  );
  const last = await plain(s.url, 'GET', `${CM}/c`);
  assert.ok(stored.length > 0);
  for (const o of [...stored, last.json]) assert.notEqual(o.data?.k, 'bad', 'a stored ConfigMap broke the policy');
});
