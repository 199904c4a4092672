/**
 * Built-in kinds end to end through a real server: validation and immutability as 422s with
 * causes, Service address and node-port allocation (conflicts, release on delete, dry run,
 * exhaustion), pods/binding, and the node-agent subresources answering at once.
 * The server gets small ranges so exhaustion is cheap: 10.0.0.0/28 (.2-.14 free) and 30000-30004.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--service-cluster-ip-range', '10.0.0.0/28', '--service-node-port-range', '30000-30004']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const NS = '/api/v1/namespaces/default';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const T = { timeout: 15_000 };

const pod = (name: string, containers: any[] = [{ name: 'c', image: 'nginx:1' }]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers },
});
const svc = (name: string, spec: any = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], ...spec },
});
const deployment = (name: string, selector: any, labels: any) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
});

function assertInvalid(
  r: { status: number; json: any; text: string },
  field: string,
  reason: string,
  message?: string,
): void {
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.reason, 'Invalid');
  const cause = r.json.details.causes.find((c: any) => c.field === field && c.reason === reason);
  assert.ok(cause, `${reason} at ${field} in ${r.text}`);
  if (message) assert.ok(r.json.message.includes(message), r.json.message);
}

test('validation: 422 Invalid with one cause per field path', T, async () => {
  const dup = await request(
    s.url,
    'POST',
    `${NS}/pods`,
    pod('dup', [
      { name: 'c', image: 'a' },
      { name: 'c', image: 'b', resources: { limits: { cpu: '-1' } } },
    ]),
  );
  assertInvalid(dup, 'spec.containers[1].name', 'FieldValueDuplicate', 'spec.containers[1].name: Duplicate value: "c"');
  assertInvalid(
    dup,
    'spec.containers[1].resources.limits[cpu]',
    'FieldValueInvalid',
    'must be greater than or equal to 0',
  );
  const lots = await request(
    s.url,
    'POST',
    `${NS}/pods`,
    pod('lots', [{ name: 'c', image: 'b', resources: { limits: { cpu: 'lots' } } }]),
  );
  assert.equal(lots.status, 400, lots.text);
  assert.equal(lots.json.reason, 'BadRequest');
  assert.equal(
    lots.json.message,
    `Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
  );
  const mismatch = await request(
    s.url,
    'POST',
    DEP,
    deployment('mismatch', { matchLabels: { app: 'x' } }, { app: 'y' }),
  );
  assertInvalid(
    mismatch,
    'spec.template.metadata.labels',
    'FieldValueInvalid',
    'Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`',
  );
  const cron = await request(s.url, 'POST', '/apis/batch/v1/namespaces/default/cronjobs', {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'cj' },
    spec: {
      schedule: 'every minute',
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
      },
    },
  });
  assertInvalid(cron, 'spec.schedule', 'FieldValueInvalid', 'expected exactly 5 fields, found 2: [every minute]');
  const ok = await request(s.url, 'POST', DEP, deployment('good', { matchLabels: { app: 'g' } }, { app: 'g' }));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.spec.replicas, 1);
});

test('immutability: selector, pod spec and clusterIP changes are 422 with the field path', T, async () => {
  // its own Deployment: the test may run alone
  assert.equal(
    (await request(s.url, 'POST', DEP, deployment('immutable', { matchLabels: { app: 'g' } }, { app: 'g' }))).status,
    201,
  );
  const sel = await request(
    s.url,
    'PATCH',
    `${DEP}/immutable`,
    {
      spec: {
        selector: { matchLabels: { app: 'g', tier: 'web' } },
        template: { metadata: { labels: { tier: 'web' } } },
      },
    },
    MERGE,
  );
  assertInvalid(sel, 'spec.selector', 'FieldValueInvalid', 'field is immutable');
  assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod('im'))).status, 201);
  const image = await request(
    s.url,
    'PATCH',
    `${NS}/pods/im`,
    { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.equal(image.status, 200, image.text);
  const other = await request(s.url, 'PATCH', `${NS}/pods/im`, { spec: { restartPolicy: 'Never' } }, MERGE);
  assertInvalid(
    other,
    'spec',
    'FieldValueForbidden',
    'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`',
  );
  const created = await request(s.url, 'POST', `${NS}/services`, svc('fixed'));
  const moved = await request(
    s.url,
    'PATCH',
    `${NS}/services/fixed`,
    { spec: { clusterIP: '10.0.0.13', clusterIPs: ['10.0.0.13'] } },
    MERGE,
  );
  // upstream validateUpgradeDowngradeClusterIPs (the single clusterIP immutability rule went with dual-stack)
  assertInvalid(
    moved,
    'spec.clusterIPs[0]',
    'FieldValueInvalid',
    `spec.clusterIPs[0]: Invalid value: []string{"10.0.0.13"}: may not change once set`,
  );
  assert.equal((await request(s.url, 'DELETE', `${NS}/services/fixed`)).status, 200, created.text);
});

test('services: allocation, conflicts, release on delete, headless and ExternalName', T, async () => {
  const a = await request(s.url, 'POST', `${NS}/services`, svc('alloc-a'));
  assert.equal(a.status, 201, a.text);
  const ip = a.json.spec.clusterIP;
  assert.match(ip, /^10\.0\.0\.([2-9]|1[0-4])$/);
  assert.deepEqual(
    [a.json.spec.clusterIPs, a.json.spec.type, a.json.spec.ports[0].targetPort],
    [[ip], 'ClusterIP', 80],
  );
  const taken = await request(s.url, 'POST', `${NS}/services`, svc('alloc-b', { clusterIP: ip }));
  assertInvalid(
    taken,
    'spec.clusterIPs',
    'FieldValueInvalid',
    `spec.clusterIPs: Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`,
  );
  const outside = await request(s.url, 'POST', `${NS}/services`, svc('alloc-b', { clusterIP: '10.0.1.1' }));
  assertInvalid(
    outside,
    'spec.clusterIPs',
    'FieldValueInvalid',
    'is not in the valid range. The range of valid IPs is 10.0.0.0/28',
  );
  assert.equal((await request(s.url, 'DELETE', `${NS}/services/alloc-a`)).status, 200);
  const reuse = await request(s.url, 'POST', `${NS}/services`, svc('alloc-b', { clusterIP: ip }));
  assert.equal(reuse.status, 201, reuse.text);
  const headless = await request(s.url, 'POST', `${NS}/services`, svc('alloc-h', { clusterIP: 'None' }));
  assert.deepEqual(headless.json.spec.clusterIPs, ['None']);
  const ext = await request(
    s.url,
    'POST',
    `${NS}/services`,
    svc('alloc-e', { type: 'ExternalName', externalName: 'db.example.com', ports: [] }),
  );
  assert.equal(ext.status, 201, ext.text);
  assert.equal(ext.json.spec.clusterIP, undefined);
  for (const n of ['alloc-b', 'alloc-h', 'alloc-e'])
    assert.equal((await request(s.url, 'DELETE', `${NS}/services/${n}`)).status, 200);
});

test('dry run reserves nothing: a real create afterwards gets the same address and port', T, async () => {
  const body = svc('dry', { type: 'NodePort' });
  const dry = await request(s.url, 'POST', `${NS}/services?dryRun=All`, body);
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await request(s.url, 'GET', `${NS}/services/dry`)).status, 404);
  const real = await request(s.url, 'POST', `${NS}/services`, body);
  assert.equal(real.status, 201, real.text);
  assert.equal(real.json.spec.clusterIP, dry.json.spec.clusterIP);
  assert.equal(real.json.spec.ports[0].nodePort, dry.json.spec.ports[0].nodePort);
  const port = real.json.spec.ports[0].nodePort;
  assert.ok(port >= 30000 && port <= 30004, String(port));
  const clash = await request(
    s.url,
    'POST',
    `${NS}/services`,
    svc('dry-2', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
  );
  assertInvalid(
    clash,
    'spec.ports[0].nodePort',
    'FieldValueInvalid',
    `spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`,
  );
  assert.equal((await request(s.url, 'DELETE', `${NS}/services/dry`)).status, 200);
});

test('concurrent creates (one actor batch) get distinct addresses and node ports', T, async () => {
  const names = ['cc-1', 'cc-2', 'cc-3', 'cc-4'];
  const made = await Promise.all(
    names.map((n) => request(s.url, 'POST', `${NS}/services`, svc(n, { type: 'NodePort' }))),
  );
  for (const r of made) assert.equal(r.status, 201, r.text);
  assert.equal(new Set(made.map((r) => r.json.spec.clusterIP)).size, names.length);
  assert.equal(new Set(made.map((r) => r.json.spec.ports[0].nodePort)).size, names.length);
  for (const n of names) assert.equal((await request(s.url, 'DELETE', `${NS}/services/${n}`)).status, 200);
});

test('exhaustion: a full ClusterIP range is 500 "range is full"; deleting one frees it', T, async () => {
  const made: string[] = [];
  let last: Awaited<ReturnType<typeof request>> | undefined;
  for (let i = 0; i < 20; i++) {
    last = await request(s.url, 'POST', `${NS}/services`, svc(`full-${i}`));
    if (last.status !== 201) break;
    made.push(`full-${i}`);
  }
  assert.equal(last!.status, 500, last!.text);
  assert.deepEqual(
    [last!.json.reason, last!.json.message],
    ['InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full'],
  );
  assert.ok(made.length >= 10 && made.length <= 13, String(made.length));
  assert.equal((await request(s.url, 'DELETE', `${NS}/services/${made.pop()}`)).status, 200);
  assert.equal((await request(s.url, 'POST', `${NS}/services`, svc('full-again'))).status, 201);
  for (const n of [...made, 'full-again']) await request(s.url, 'DELETE', `${NS}/services/${n}`);
});

test('pods/binding sets nodeName once: 201 Success, then 409 Conflict', T, async () => {
  assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod('bind-me'))).status, 201);
  const b = await request(s.url, 'POST', `${NS}/pods/bind-me/binding`, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'bind-me' },
    target: { kind: 'Node', name: 'n1' },
  });
  assert.equal(b.status, 201, b.text);
  assert.deepEqual(b.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const got = await request(s.url, 'GET', `${NS}/pods/bind-me`);
  assert.equal(got.json.spec.nodeName, 'n1');
  assert.equal(got.json.status.conditions.find((c: any) => c.type === 'PodScheduled').status, 'True');
  const again = await request(s.url, 'POST', `${NS}/pods/bind-me/binding`, { target: { kind: 'Node', name: 'n2' } });
  assert.equal(again.status, 409, again.text);
  assert.equal(again.json.reason, 'Conflict');
  assert.equal(
    again.json.message,
    'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "n1"',
  );
  const missing = await request(s.url, 'POST', `${NS}/pods/nobody/binding`, { target: { name: 'n1' } });
  assert.equal(missing.status, 404);
});

test('legacy POST bindings binds the pod named in the body and stores no Binding', T, async () => {
  assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod('bind-legacy'))).status, 201);
  const b = await request(s.url, 'POST', `${NS}/bindings`, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'bind-legacy' },
    target: { kind: 'Node', name: 'n3' },
  });
  assert.equal(b.status, 201, b.text);
  assert.deepEqual(b.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  assert.equal((await request(s.url, 'GET', `${NS}/pods/bind-legacy`)).json.spec.nodeName, 'n3');
  const again = await request(s.url, 'POST', `${NS}/bindings`, {
    metadata: { name: 'bind-legacy' },
    target: { name: 'n4' },
  });
  assert.equal(again.status, 409, again.text);
  assert.equal(
    (await request(s.url, 'POST', `${NS}/bindings`, { metadata: { name: 'nobody' }, target: { name: 'n1' } })).status,
    404,
  );
  const unnamed = await request(s.url, 'POST', `${NS}/bindings`, { target: { name: 'n1' } });
  assert.equal(unnamed.status, 422, unnamed.text);
  assert.equal(unnamed.json.details.causes[0].field, 'metadata.name');
});

test('log, exec, attach, portforward and proxy answer at once without a node agent', T, async () => {
  assert.equal((await request(s.url, 'POST', `${NS}/pods`, pod('lonely'))).status, 201);
  const log = await request(s.url, 'GET', `${NS}/pods/lonely/log`);
  assert.deepEqual([log.status, log.text, log.headers.get('content-type')], [200, '', 'text/plain']);
  for (const sub of ['exec?command=ls&stdout=true', 'attach?stdout=true', 'portforward?ports=80']) {
    for (const method of ['GET', 'POST']) {
      const r = await request(s.url, method, `${NS}/pods/lonely/${sub}`, method === 'POST' ? {} : undefined);
      assert.deepEqual(
        [r.status, r.json?.reason, r.json?.message],
        [400, 'BadRequest', 'pod lonely does not have a host assigned'],
        `${method} ${sub}`,
      );
    }
  }
  const proxyDelete = await request(s.url, 'DELETE', `${NS}/pods/lonely/proxy`);
  assert.deepEqual([proxyDelete.status, proxyDelete.json.message], [400, 'address not allowed']);
  assert.equal((await request(s.url, 'GET', `${NS}/pods/lonely`)).status, 200, 'DELETE on pods/proxy leaves the pod');
  await request(s.url, 'POST', `${NS}/pods/lonely/binding`, { target: { name: 'n1' } });
  for (const sub of ['log', 'exec', 'attach', 'portforward']) {
    const r = await request(s.url, 'GET', `${NS}/pods/lonely/${sub}`);
    // the node agent is looked up: the pod's node does not exist
    assert.deepEqual([r.status, r.json?.reason, r.json?.message], [404, 'NotFound', 'nodes "n1" not found'], sub);
  }
  assert.equal((await request(s.url, 'POST', `${NS}/services`, svc('proxied'))).status, 201);
  const sp = await request(s.url, 'GET', `${NS}/services/proxied/proxy`);
  assert.deepEqual([sp.status, sp.json.message], [503, 'no endpoints available for service "proxied"']);
  await request(s.url, 'DELETE', `${NS}/services/proxied`);
});
