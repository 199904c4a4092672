/**
 * The load CLI against a running server's secure port through a kubeconfig: the CA from a file,
 * a bearer token, or an inline client certificate (system:masters, so /metrics is readable and
 * the counts are checked as well).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pki, startAuthServer } from '../auth/helpers.js';
import type { Report } from '../../bench/load/report.js';

const RUN = resolve(process.cwd(), 'dist/bench/run.js');

function kubeconfig(server: string, caFile: string, user: Record<string, string>): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: bench',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority: ${caFile}`,
    'users:',
    '- name: u',
    '  user:',
    ...Object.entries(user).map(([k, v]) => `    ${k}: ${v}`),
    'contexts:',
    '- name: bench',
    '  context:',
    '    cluster: c',
    '    user: u',
    '',
  ].join('\n');
}

test('HTTPS with a kubeconfig: token and client certificate; refused and unreachable targets', async () => {
  const pki = new Pki().ca('client-ca').client('client-ca', 'admin', '/CN=bench-admin/O=system:masters');
  writeFileSync(pki.path('tokens.csv'), 'root-token,root,uid-r,system:masters\n');
  const s = await startAuthServer([
    '--client-ca-file',
    pki.path('client-ca.crt'),
    '--token-auth-file',
    pki.path('tokens.csv'),
  ]);
  const out = mkdtempSync(join(tmpdir(), 'plat-bench-out-'));
  try {
    const users: [string, Record<string, string>, Report['target']['auth']][] = [
      ['token', { token: 'root-token' }, 'token'],
      [
        'cert',
        {
          'client-certificate-data': pki.read('admin.crt').toString('base64'),
          'client-key-data': pki.read('admin.key').toString('base64'),
        },
        'client-certificate',
      ],
    ];
    for (const [name, user, auth] of users) {
      const kc = join(out, `${name}.kubeconfig`);
      writeFileSync(kc, kubeconfig(s.secureUrl, `${s.dataDir}/pki/ca.crt`, user));
      const dir = join(out, name);
      const r = spawnSync(
        process.execPath,
        [
          RUN,
          'get',
          'create',
          '--kubeconfig',
          kc,
          '--duration',
          '1s',
          '--concurrency',
          '2',
          '--no-ceilings',
          '--no-progress',
          '--out',
          dir,
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
      assert.deepEqual(report.target, { url: s.secureUrl, startedByBench: false, tls: true, auth });
      assert.equal(report.summary.errors, 0);
      assert.ok(report.summary.requests > 10);
      assert.equal(report.metricsCheck.available, true);
      assert.equal(report.metricsCheck.matched, true, JSON.stringify(report.metricsCheck.differences));
    }
    // a refused credential stops the run before any scenario, with a message, no stack
    const bad = spawnSync(
      process.execPath,
      [
        RUN,
        'get',
        '--server',
        s.secureUrl,
        '--kubeconfig',
        join(out, 'token.kubeconfig'),
        '--token',
        'wrong',
        '--out',
        join(out, 'bad'),
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(bad.status, 1);
    assert.equal(
      bad.stderr.trim(),
      `bench: ${s.secureUrl} answered 401 Unauthorized: check --token or the kubeconfig's credentials`,
    );
    const down = spawnSync(
      process.execPath,
      [RUN, 'get', '--server', 'http://127.0.0.1:1', '--out', join(out, 'down')],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(down.status, 1);
    assert.match(down.stderr, /^bench: cannot reach http:\/\/127\.0\.0\.1:1: connect ECONNREFUSED/);
  } finally {
    await s.stop();
    s.cleanup();
    pki.cleanup();
    rmSync(out, { recursive: true, force: true });
  }
});
