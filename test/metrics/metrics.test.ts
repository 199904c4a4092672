/**
 * /metrics on the plain port: request counts that match the requests made, the latency
 * histogram, the long-running (watch) gauge, stored object counts, and the flag for hidden
 * metrics.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { parseMetrics, sampleValue, type Sample } from '../helpers/metrics.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--show-hidden-metrics-for-version', '1.31']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

async function scrape(): Promise<Sample[]> {
  const r = await request(s.url, 'GET', '/metrics');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseMetrics(r.text);
}

const CM = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver' };
const total = (m: Sample[], labels: Record<string, string>) => sampleValue(m, 'apiserver_request_total', labels);

test('apiserver_request_total counts each request by verb, scope, dry run and code', async () => {
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'm1' } });
  const before = await scrape();
  const ns = '/api/v1/namespaces/m1/configmaps';
  for (let i = 0; i < 3; i++) assert.equal((await request(s.url, 'POST', ns, configMap(`c${i}`))).status, 201);
  assert.equal((await request(s.url, 'POST', ns, configMap('c0'))).status, 409);
  assert.equal((await request(s.url, 'POST', `${ns}?dryRun=All`, configMap('dry'))).status, 201);
  for (let i = 0; i < 2; i++) assert.equal((await request(s.url, 'GET', `${ns}/c0`)).status, 200);
  assert.equal((await request(s.url, 'GET', `${ns}/missing`)).status, 404);
  assert.equal((await request(s.url, 'GET', ns)).status, 200);
  assert.equal((await request(s.url, 'GET', '/api/v1/configmaps')).status, 200);
  assert.equal(
    (
      await request(
        s.url,
        'PATCH',
        `${ns}/c1?fieldManager=t&force=true`,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { k: 'x' } },
        { 'content-type': 'application/apply-patch+yaml' },
      )
    ).status,
    200,
  );
  assert.equal((await request(s.url, 'DELETE', `${ns}/c2`)).status, 200);
  assert.equal((await request(s.url, 'GET', '/readyz')).status, 200);
  const after = await scrape();
  const delta = (labels: Record<string, string>) => total(after, labels) - total(before, labels);
  assert.equal(delta({ ...CM, verb: 'POST', scope: 'resource', dry_run: '', code: '201' }), 3);
  assert.equal(delta({ ...CM, verb: 'POST', scope: 'resource', dry_run: '', code: '409' }), 1);
  assert.equal(delta({ ...CM, verb: 'POST', scope: 'resource', dry_run: 'All', code: '201' }), 1);
  assert.equal(delta({ ...CM, verb: 'GET', scope: 'resource', dry_run: '', code: '200' }), 2);
  assert.equal(delta({ ...CM, verb: 'GET', scope: 'resource', dry_run: '', code: '404' }), 1);
  assert.equal(delta({ ...CM, verb: 'LIST', scope: 'namespace', dry_run: '', code: '200' }), 1);
  assert.equal(delta({ ...CM, verb: 'LIST', scope: 'cluster', dry_run: '', code: '200' }), 1);
  assert.equal(delta({ ...CM, verb: 'APPLY', scope: 'resource', dry_run: '', code: '200' }), 1);
  assert.equal(delta({ ...CM, verb: 'DELETE', scope: 'resource', dry_run: '', code: '200' }), 1);
  assert.equal(delta({ verb: 'GET', subresource: '/readyz', component: '', code: '200' }), 1);
  // the histogram saw the same requests
  const count = (m: Sample[]) =>
    sampleValue(m, 'apiserver_request_duration_seconds_count', { ...CM, verb: 'POST', scope: 'resource', dry_run: '' });
  assert.equal(count(after) - count(before), 4);
  const inf = sampleValue(after, 'apiserver_request_duration_seconds_bucket', {
    ...CM,
    verb: 'POST',
    scope: 'resource',
    dry_run: '',
    le: '+Inf',
  });
  assert.equal(inf, count(after));
  // stored objects: c0, c1 (c2 deleted, the dry run never stored)
  assert.equal(sampleValue(after, 'apiserver_storage_objects', { resource: 'configmaps' }), 2);
  assert.ok(sampleValue(after, 'apiserver_storage_objects', { resource: 'namespaces' }) >= 5);
});

test('an unknown resource and an unknown path are counted without user-controlled labels', async () => {
  const before = await scrape();
  assert.equal((await request(s.url, 'GET', '/apis/nothere.example/v1/things')).status, 404);
  const after = await scrape();
  const labels = { verb: 'GET', group: '', version: '', resource: '', subresource: '', code: '404' };
  assert.equal(total(after, labels) - total(before, labels), 1);
  assert.ok(!after.some((x) => Object.values(x.labels).includes('nothere.example')));
});

test('hostile paths and unknown subresources never become label values; served paths do; no series repeats', async () => {
  const long = `/${'y'.repeat(20_000)}`;
  assert.equal((await request(s.url, 'GET', long)).status, 404);
  assert.equal((await request(s.url, 'GET', '/healthz/no-such-check')).status, 404);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/x/no-such-sub')).status, 404);
  assert.equal((await request(s.url, 'GET', '/version')).status, 200);
  const r = await request(s.url, 'GET', '/metrics');
  assert.ok(!r.text.includes('yyyy'), 'a 404 path is not a label');
  assert.ok(!r.text.includes('no-such'), 'neither an unknown health check nor an unknown subresource');
  assert.ok(
    total(parseMetrics(r.text), { verb: 'GET', subresource: '/version', code: '200' }) >= 1,
    'a served path is its own series',
  );
  const keys = r.text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
  assert.equal(new Set(keys).size, keys.length, 'every series once');
});

test('the process_* families of the Prometheus process collector', async () => {
  const m = await scrape();
  const v = (name: string) => sampleValue(m, name, {});
  assert.ok(v('process_resident_memory_bytes') > 10 * 1024 * 1024);
  assert.ok(v('process_virtual_memory_bytes') >= v('process_resident_memory_bytes'));
  assert.ok(v('process_cpu_seconds_total') > 0);
  assert.ok(v('process_open_fds') > 0 && v('process_open_fds') <= v('process_max_fds'));
  const start = v('process_start_time_seconds');
  assert.ok(start > Date.now() / 1000 - 600 && start <= Date.now() / 1000, `started ${start}`);
});

test('a watch is a long-running request while open and is counted once it ends', async () => {
  const path = '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30';
  const watchLabels = { ...CM, verb: 'WATCH', scope: 'namespace' };
  const before = await scrape();
  const ctrl = new AbortController();
  const res = await fetch(s.url + path, { signal: ctrl.signal });
  assert.equal(res.status, 200);
  const open = await scrape();
  assert.equal(sampleValue(open, 'apiserver_longrunning_requests', watchLabels), 1);
  ctrl.abort();
  await res.body?.cancel().catch(() => undefined);
  const deadline = Date.now() + 10_000;
  let closed = await scrape();
  while (sampleValue(closed, 'apiserver_longrunning_requests', watchLabels) !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    closed = await scrape();
  }
  assert.equal(sampleValue(closed, 'apiserver_longrunning_requests', watchLabels), 0);
  assert.equal(
    total(closed, { ...watchLabels, code: '200', dry_run: '' }) -
      total(before, { ...watchLabels, code: '200', dry_run: '' }),
    1,
  );
});

test('stability classes in HELP; in-flight and feature gauges; /metrics counts itself', async () => {
  // a counted request first (it runs alone too): a counter without series has no HELP line
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces')).status, 200);
  const r = await request(s.url, 'GET', '/metrics');
  assert.match(r.text, /^# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/m);
  assert.match(r.text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  assert.match(r.text, /^apiserver_current_inflight_requests\{request_kind="readOnly"\} \d+$/m);
  assert.match(r.text, /^apiserver_current_inflight_requests\{request_kind="mutating"\} \d+$/m);
  assert.match(r.text, /^platform_feature_enabled\{name="AllowUnsafeMalformedObjectDeletion",stage="ALPHA"\} 0$/m);
  assert.match(r.text, /^platform_feature_enabled\{name="RetryGenerateName",stage=""\} 1$/m);
  const m = parseMetrics((await request(s.url, 'GET', '/metrics')).text);
  assert.ok(total(m, { verb: 'GET', subresource: '/metrics', code: '200' }) >= 1);
});

test('--show-hidden-metrics-for-version: only the previous minor release starts', () => {
  const main = resolve(process.cwd(), 'dist/src/main.js');
  const r = spawnSync(process.execPath, [main, '--port', '0', '--show-hidden-metrics-for-version', '1.30'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2);
  assert.match(
    r.stderr,
    /--show-hidden-metrics-for-version must be omitted or have the value '1\.31'\. Only the previous minor version is allowed/,
  );
});
