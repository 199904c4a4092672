/**
 * Auditing on the plain port: each level (None, Metadata, Request, RequestResponse), the stages
 * (RequestReceived, ResponseStarted for a watch, ResponseComplete), omitStages and
 * omitManagedFields, the deprecation annotations, Audit-Id, and a bad policy file at start.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { readAudit, waitForAudit, type AuditEvent } from '../helpers/audit.js';
import { until } from '../helpers/poll.js';

const POLICY = `apiVersion: audit.plat.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/metrics"]
- level: Metadata
  namespaces: ["meta"]
  omitStages: ["RequestReceived"]
- level: Request
  namespaces: ["req"]
- level: RequestResponse
  namespaces: ["full"]
- level: Metadata
  resources:
  - group: admissionregistration.plat.io
- level: Metadata
  resources:
  - group: ""
    resources: ["namespaces"]
- level: None
`;

let s: TestServer;
let dir: string;
let log: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plat-audit-'));
  log = join(dir, 'audit.log');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  s = await startServer([
    '--audit-policy-file',
    join(dir, 'policy.yaml'),
    '--audit-log-path',
    log,
    '--runtime-config',
    'admissionregistration.plat.io/v1beta1=true',
  ]);
  for (const ns of ['meta', 'req', 'full', 'other'])
    assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
});
after(async () => {
  await s.stop();
  s.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const byID = (id: string | null) => (e: AuditEvent) => e.auditID === id;

test('Metadata: who, what, the outcome; no bodies; RequestReceived omitted by the rule', async () => {
  const r = await request(s.url, 'POST', '/api/v1/namespaces/meta/configmaps?fieldManager=t', configMap('m1'), {
    'user-agent': 'audit-test/1.0',
  });
  assert.equal(r.status, 201);
  const id = r.headers.get('audit-id');
  assert.ok(id);
  const [ev, ...more] = await waitForAudit(log, byID(id));
  assert.equal(more.length, 0);
  assert.deepEqual(
    { ...ev, auditID: undefined, requestReceivedTimestamp: undefined, stageTimestamp: undefined },
    {
      kind: 'Event',
      apiVersion: 'audit.plat.io/v1',
      level: 'Metadata',
      auditID: undefined,
      stage: 'ResponseComplete',
      requestURI: '/api/v1/namespaces/meta/configmaps?fieldManager=t',
      verb: 'create',
      user: { username: 'system:unsecured', groups: ['system:masters', 'system:authenticated'] },
      sourceIPs: ['127.0.0.1'],
      userAgent: 'audit-test/1.0',
      objectRef: { resource: 'configmaps', namespace: 'meta', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      requestReceivedTimestamp: undefined,
      stageTimestamp: undefined,
    },
  );
  assert.match(ev!.stageTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  const missing = await request(s.url, 'GET', '/api/v1/namespaces/meta/configmaps/nope');
  const [notFound] = await waitForAudit(log, byID(missing.headers.get('audit-id')));
  assert.deepEqual(notFound!.responseStatus, {
    metadata: {},
    status: 'Failure',
    message: 'configmaps "nope" not found',
    reason: 'NotFound',
    details: missing.json.details,
    code: 404,
  });
});

test('Request: RequestReceived then ResponseComplete with the request object, no response object', async () => {
  const r = await request(s.url, 'POST', '/api/v1/namespaces/req/configmaps', configMap('r1', {}, { a: 'b' }));
  assert.equal(r.status, 201);
  const events = await waitForAudit(log, byID(r.headers.get('audit-id')), 2);
  assert.deepEqual(
    events.map((e) => e.stage),
    ['RequestReceived', 'ResponseComplete'],
  );
  assert.equal(events[0]!.responseStatus, undefined);
  assert.deepEqual(events[1]!.requestObject, configMap('r1', {}, { a: 'b' }));
  assert.equal(events[1]!.responseObject, undefined);
  assert.equal(events[0]!.level, 'Request');
});

test('RequestResponse: the response object too, managed fields omitted (policy omitManagedFields)', async () => {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces/full/configmaps', configMap('f1'))).status, 201);
  const r = await request(s.url, 'GET', '/api/v1/namespaces/full/configmaps/f1');
  assert.ok(r.json.metadata.managedFields, 'the client sees managed fields');
  const events = await waitForAudit(log, byID(r.headers.get('audit-id')), 2);
  const done = events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.level, 'RequestResponse');
  assert.equal(done.responseObject.metadata.name, 'f1');
  assert.equal(done.responseObject.metadata.managedFields, undefined);
  assert.equal(done.objectRef.name, 'f1');
});

test('None: nothing is written (non-resource URL rule, catch-all rule)', async () => {
  const ready = await request(s.url, 'GET', '/readyz');
  const other = await request(s.url, 'POST', '/api/v1/namespaces/other/configmaps', configMap('o1'));
  assert.equal(other.status, 201);
  assert.equal(ready.headers.get('audit-id'), null);
  assert.equal(other.headers.get('audit-id'), null);
  // a later audited request is written after them: they would be in the log by then
  const later = await request(s.url, 'GET', '/api/v1/namespaces/meta');
  await waitForAudit(log, byID(later.headers.get('audit-id')));
  assert.ok(!readAudit(log).some((e) => e.requestURI === '/readyz' || e.objectRef?.namespace === 'other'));
});

test('a watch: RequestReceived, ResponseStarted when streaming starts, ResponseComplete when it ends', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces/req/configmaps?watch=1&timeoutSeconds=1');
  assert.equal(r.status, 200);
  const events = await waitForAudit(log, byID(r.headers.get('audit-id')), 3);
  assert.deepEqual(
    events.map((e) => e.stage),
    ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
  );
  assert.deepEqual(events[1]!.responseStatus, { metadata: {}, code: 200 });
  assert.equal(events[2]!.verb, 'watch');
});

test('deprecated API: plat.io/deprecated and plat.io/removed-release annotations', async () => {
  const r = await request(s.url, 'GET', '/apis/admissionregistration.plat.io/v1beta1/validatingadmissionpolicies');
  assert.equal(r.status, 200);
  const events = await waitForAudit(log, byID(r.headers.get('audit-id')), 2);
  assert.deepEqual(events.at(-1)!.annotations, { 'plat.io/deprecated': 'true', 'plat.io/removed-release': '1.34' });
  const v1 = await request(s.url, 'GET', '/apis/admissionregistration.plat.io/v1/validatingadmissionpolicies');
  const [ev] = await waitForAudit(log, byID(v1.headers.get('audit-id')));
  assert.equal(ev!.annotations, undefined);
});

test('a client-chosen Audit-ID is kept', async () => {
  const r = await request(s.url, 'GET', '/api/v1/namespaces/meta/configmaps', undefined, {
    'audit-id': 'my-trace-123',
  });
  assert.equal(r.headers.get('audit-id'), 'my-trace-123');
  assert.equal((await waitForAudit(log, byID('my-trace-123'))).length, 1);
});

test('apiserver_audit_event_total counts the events written', async () => {
  const count = async () =>
    Number(/^apiserver_audit_event_total (\d+)$/m.exec((await request(s.url, 'GET', '/metrics')).text)?.[1]);
  const before = await count();
  const r = await request(s.url, 'POST', '/api/v1/namespaces/req/configmaps', configMap('counted'));
  await waitForAudit(log, byID(r.headers.get('audit-id')), 2);
  assert.equal((await count()) - before, 2, 'RequestReceived and ResponseComplete');
  assert.match((await request(s.url, 'GET', '/metrics')).text, /^apiserver_audit_error_total\{plugin="log"\} 0$/m);
});

test('--audit-log-path - writes the events to stdout', async () => {
  const main = resolve(process.cwd(), 'dist/src/main.js');
  const proc = spawn(
    process.execPath,
    [
      main,
      '--port',
      '0',
      '--data-dir',
      join(dir, 'stdout-data'),
      '--audit-policy-file',
      join(dir, 'policy.yaml'),
      '--audit-log-path',
      '-',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
    });
    // hang guards only (a loaded 2-core machine under coverage took more than 20 s to start it)
    const port = await until(
      async () => /listening on http:\/\/[^:]+:(\d+)/.exec(out)?.[1],
      'the server to listen',
      120_000,
    );
    const r = await request(`http://127.0.0.1:${port}`, 'GET', '/api/v1/namespaces/meta/configmaps');
    const id = r.headers.get('audit-id')!;
    const line = await until(
      async () => out.split('\n').find((l) => l.includes(id)),
      `the audit event ${id} on stdout`,
      60_000,
    );
    assert.equal(JSON.parse(line).stage, 'ResponseComplete');
  } finally {
    proc.kill('SIGTERM');
    await once(proc, 'exit');
  }
});

test('a bad policy file stops the server at start with the problem', () => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'apiVersion: audit.plat.io/v1\nkind: Policy\nrules:\n- level: Loud\n');
  const main = resolve(process.cwd(), 'dist/src/main.js');
  const r = spawnSync(
    process.execPath,
    [
      main,
      '--port',
      '0',
      '--data-dir',
      join(dir, 'unused'),
      '--audit-policy-file',
      bad,
      '--audit-log-path',
      join(dir, 'x.log'),
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  assert.equal(r.status, 1);
  assert.match(r.stderr, /loading audit policy file ".*bad\.yaml": rules\[0\]\.level: Unsupported value: "Loud"/);
});
