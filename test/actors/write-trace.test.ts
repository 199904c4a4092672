/**
 * The bench-only write trace (src/actors/write-trace.ts, PLAT_WRITE_TRACE): the front thread
 * makes the trace directory when it starts sampling, so a directory named but not made yet no
 * longer ends the server at its first append (the thread sample, a second after the start).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = mkdtempSync(join(tmpdir(), 'plat-write-trace-'));
after(() => rmSync(root, { recursive: true, force: true }));

const MODULE = fileURLToPath(new URL('../../src/actors/write-trace.js', import.meta.url));

test('sampling threads makes a trace directory that does not exist yet', () => {
  const dir = join(root, 'not', 'made');
  assert.equal(existsSync(dir), false);
  // the front thread's pool calls sampleThreads first; its samples and every thread's batch
  // lines are appended to files in the directory later
  const script = `
    const t = await import(${JSON.stringify(MODULE)});
    t.sampleThreads();
    const { existsSync } = await import('node:fs');
    process.stdout.write(String(existsSync(process.env.PLAT_WRITE_TRACE)));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, PLAT_WRITE_TRACE: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, 'true');
  assert.ok(existsSync(dir));
});
