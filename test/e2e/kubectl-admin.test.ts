/**
 * Secure by default: started with the secure port only, the server generates its CA, a serving
 * certificate and an admin client certificate (system:masters), and writes
 * `<data-dir>/admin.kubeconfig`; kubectl v1.32 uses it as is. The plain port is off unless asked
 * for, and loopback only by default.
 */
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startupError } from '../auth/helpers.js';

const MAIN = resolve(process.cwd(), 'dist/src/main.js');
const dir = mkdtempSync(join(tmpdir(), 'plat-admin-'));
let proc: ChildProcess | undefined;
after(async () => {
  await stop();
  rmSync(dir, { recursive: true, force: true });
});

async function stop(): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGTERM');
  await exited;
}

/** Starts with `--secure-port 0` (never the fixed 6443 in tests) and no --port; resolves with stdout once the kubeconfig line is out. */
async function start(): Promise<string> {
  proc = spawn(
    process.execPath,
    [MAIN, '--secure-port', '0', '--data-dir', join(dir, 'data'), '--api-domain', 'k8s.io'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '',
    err = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  return new Promise((done, fail) => {
    proc!.stdout!.on('data', (d) => {
      out += d;
      if (/admin kubeconfig written to .*\n/.test(out)) done(out);
    });
    proc!.once('exit', (code) => fail(new Error(`server exited with ${code}: ${err}`)));
  });
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      '/usr/bin/kubectl',
      [
        '--kubeconfig',
        join(dir, 'data', 'admin.kubeconfig'),
        '--cache-dir',
        join(dir, 'cache'),
        '--request-timeout',
        '20s',
        ...args,
      ],
      {
        env: { ...process.env, KUBECONFIG: '', HOME: dir },
        timeout: 30_000,
      },
      (e, stdout, stderr) =>
        done({
          code: e ? (typeof (e as any).code === 'number' ? (e as any).code : -1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

// The tests below are steps of one scenario, as upstream's test/cmd functions are: run them in order
// (the file runs alone; a single step alone has nothing to work on).
describe('the admin kubeconfig, a scenario in order (the restart step reuses the certificates of the first start)', () => {
  test('the admin kubeconfig works at once with kubectl (client certificate in system:masters); no plain port', async () => {
    const out = await start();
    assert.match(out, /^secure listening on https:\/\/127\.0\.0\.1:\d+$/m);
    assert.doesNotMatch(out, /listening on http:\/\//, 'the plain port is off by default');
    assert.match(out, new RegExp(`admin kubeconfig written to ${join(dir, 'data', 'admin.kubeconfig')}`));
    assert.equal(statSync(join(dir, 'data', 'admin.kubeconfig')).mode & 0o777, 0o600);
    const ns = await kubectl('get', 'ns', '-o', 'name');
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /^namespace\/default$/m);
    const me = await kubectl('auth', 'whoami', '-o', 'json');
    assert.equal(me.code, 0, me.stderr);
    assert.deepEqual(JSON.parse(me.stdout).status.userInfo, {
      username: 'kubernetes-admin',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  test('a restart reuses the certificates and rewrites the kubeconfig for the new port', async () => {
    const cert = readFileSync(join(dir, 'data', 'pki', 'admin.crt'), 'utf8');
    await stop();
    await start();
    assert.equal(readFileSync(join(dir, 'data', 'pki', 'admin.crt'), 'utf8'), cert);
    const ns = await kubectl('get', 'ns', 'default', '-o', 'name');
    assert.equal(ns.code, 0, ns.stderr);
  });

  test('npm start keeps the plain port on 8080 for the quick start; a non-loopback plain address warns', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    assert.match(pkg.scripts.start, /dist\/src\/main\.js --port 8080$/);
    // TEST-NET-3 is not on this host: the warning comes first, then the bind fails
    const r = await startupError(['--insecure-bind-address', '203.0.113.1', '--secure-port', 'off']);
    assert.match(
      r.stderr,
      /warning: --insecure-bind-address 203\.0\.113\.1 is not a loopback address: the plain port serves without authentication or authorization/,
    );
    assert.notEqual(r.code, 0);
  });
});
