/**
 * Logging (issue 20 item 5): the start summary, `-v=3` request lines (verb, URI, user, status,
 * latency, bytes) queued off the front thread, `--logging-format json`, the shutdown lines,
 * risky-settings warnings, and the audit event's sourceIPs on the secure port.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMain } from '../helpers/run-main.js';
import { request, configMap } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { Logger } from '../../src/server/log.js';
import { startAuthServer, request as tlsRequest } from '../auth/helpers.js';
import { waitForAudit } from '../helpers/audit.js';

const dir = mkdtempSync(join(tmpdir(), 'plat-logging-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('-v=3 --logging-format json: summary, one JSON line per request, shutdown lines', async () => {
  const s = await startMain([
    '--data-dir',
    join(dir, 'json'),
    '--secure-port',
    'off',
    '--port',
    '0',
    '-v=3',
    '--logging-format',
    'json',
  ]);
  let code: number | null;
  try {
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('logged'))).status,
      201,
    );
    assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps?limit=5')).status, 200);
    const lines = () =>
      s
        .stderr()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const list = await until(
      async () => lines().find((l) => l['msg'] === 'HTTP' && l['verb'] === 'LIST'),
      'the LIST request line',
    );
    assert.equal(list['URI'], '/api/v1/namespaces/default/configmaps?limit=5');
    assert.equal(list['user'], 'system:unsecured');
    assert.equal(list['status'], 200);
    assert.equal(list['v'], 3);
    assert.ok(typeof list['bytes'] === 'number' && list['bytes'] > 0);
    assert.match(String(list['latency']), /^\d+\.\d{3}ms$/);
    const create = lines().find((l) => l['msg'] === 'HTTP' && l['verb'] === 'CREATE')!;
    assert.equal(create['status'], 201);
    const start = lines().find((l) => l['msg'] === 'Starting platform-apiserver')!;
    assert.equal(start['version'], 'v1.32.0-platform');
    assert.ok(typeof start['ts'] === 'number');
    assert.deepEqual(lines().find((l) => l['msg'] === 'Authorization')!['modes'], ['Node', 'RBAC']);
    assert.ok(
      lines().some((l) => l['level'] === 'warning' && /serves without authentication/.test(String(l['msg']))),
      'the --port warning',
    );
  } finally {
    code = await s.stop();
  }
  assert.equal(code, 0);
  const msgs = s
    .stderr()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l)['msg']);
  assert.ok(msgs.includes('Received signal, shutting down') && msgs.includes('Shutdown complete'), msgs.join('\n'));
});

test('text format: no request lines below -v=3; AlwaysAllow warned', async () => {
  const s = await startMain([
    '--data-dir',
    join(dir, 'text'),
    '--secure-port',
    'off',
    '--port',
    '0',
    '--authorization-mode',
    'AlwaysAllow',
  ]);
  try {
    assert.equal((await request(s.url, 'GET', '/api/v1/namespaces')).status, 200);
    assert.match(s.stderr(), /^I\d{4} \d\d:\d\d:\d\d\.\d{6} Starting platform-apiserver version="v1\.32\.0-platform"/m);
    assert.match(s.stderr(), /^W\d{4} .* --authorization-mode AlwaysAllow: every authenticated request is allowed/m);
  } finally {
    await s.stop();
  }
  assert.doesNotMatch(s.stderr(), / HTTP verb=/);
  assert.match(s.stderr(), /Shutdown complete/);
});

test('request lines are queued: nothing written until the event loop turns', async () => {
  const file = join(dir, 'queued.log');
  writeFileSync(file, '');
  const fd = openSync(file, 'a');
  try {
    const log = new Logger(3, 'text', fd);
    log.queued(3, 'HTTP', { verb: 'GET', status: 200 });
    assert.equal(readFileSync(file, 'utf8'), '', 'the caller does not wait for the write');
    await until(
      async () => (readFileSync(file, 'utf8').includes('HTTP verb="GET" status=200') ? true : undefined),
      'the queued line',
    );
    log.queued(4, 'HTTP', { verb: 'PUT' });
    log.flushSync();
    assert.doesNotMatch(readFileSync(file, 'utf8'), /PUT/, 'above the verbosity: not written');
  } finally {
    closeSync(fd);
  }
});

test('audit sourceIPs on the secure port (through the TLS front)', async () => {
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.plat.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  const auditLog = join(dir, 'audit.log');
  const s = await startAuthServer(['--audit-policy-file', policy, '--audit-log-path', auditLog]);
  try {
    const ca = readFileSync(join(s.dataDir, 'pki/ca.crt'));
    await tlsRequest(s.secureUrl, { ca }, 'GET', '/api/v1/namespaces?source=tls');
    const [ev] = await waitForAudit(auditLog, (e) => e.requestURI === '/api/v1/namespaces?source=tls');
    assert.ok(ev, 'audit event written');
    assert.deepEqual(ev.sourceIPs, ['127.0.0.1']);
  } finally {
    await s.stop();
    s.cleanup();
  }
});
