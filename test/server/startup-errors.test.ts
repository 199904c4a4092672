/**
 * Startup errors (issue 20 item 3): a busy port, an unwritable data directory, a missing
 * certificate file each give one line naming the flag and the fix, exit code 1, no stack.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain, type MainRun } from '../helpers/run-main.js';

const dir = mkdtempSync(join(tmpdir(), 'plat-startup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function busyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => done({ server, port: (server.address() as { port: number }).port }));
  });
}

/** Exactly one line on stderr, `error: ...`, no stack frame, exit 1. */
function oneLineError(r: MainRun): string {
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line expected, got:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  return lines[0]!;
}

test('a busy --port and a busy --secure-port name the flag and the fix', async () => {
  const { server, port } = await busyPort();
  try {
    const plain = await runMain(['--data-dir', join(dir, 'a'), '--secure-port', 'off', '--port', String(port)]);
    assert.equal(oneLineError(plain), `error: --port ${port}: address already in use (choose another with --port)`);
    const secure = await runMain(['--data-dir', join(dir, 'b'), '--secure-port', String(port)]);
    assert.equal(
      oneLineError(secure),
      `error: --secure-port ${port}: address already in use (choose another with --secure-port)`,
    );
  } finally {
    server.close();
  }
});

test('a data directory that cannot be created names --data-dir', async () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  const r = await runMain(['--data-dir', join(file, 'data'), '--secure-port', 'off', '--port', '0']);
  assert.equal(
    oneLineError(r),
    `error: --data-dir ${join(file, 'data')}: not a directory (choose a writable directory with --data-dir)`,
  );
});

test('a missing certificate file names its flag', async () => {
  const r = await runMain([
    '--data-dir',
    join(dir, 'c'),
    '--secure-port',
    '0',
    '--tls-cert-file',
    join(dir, 'missing.crt'),
    '--tls-private-key-file',
    join(dir, 'missing.key'),
  ]);
  assert.equal(
    oneLineError(r),
    `error: --tls-cert-file ${join(dir, 'missing.crt')}: cannot read: no such file or directory (give a readable PEM file with --tls-cert-file)`,
  );
});
