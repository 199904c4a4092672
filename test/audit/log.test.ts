/** The audit log backend: batched appends, size rotation with lumberjack names, backup pruning. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../src/audit/log.js';

test('lines are appended in order, asynchronously, and all written by close()', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-audit-log-'));
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(path, '{"old":true}\n');
    const log = new AuditLog({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 });
    for (let i = 0; i < 1000; i++) log.write(JSON.stringify({ i }));
    await log.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 1001);
    assert.equal(lines[0], '{"old":true}');
    assert.deepEqual(
      lines.slice(1).map((l) => JSON.parse(l).i),
      [...Array(1000).keys()],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--audit-log-maxsize rotates to <name>-<UTC time><ext>; --audit-log-maxbackup keeps the newest backups', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-audit-rot-'));
  try {
    const path = join(dir, 'audit.log');
    const log = new AuditLog({ path, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0 });
    const line = JSON.stringify({ pad: 'x'.repeat(10_000) });
    // ~4.1 MB in several batches: rotations at each 1 MiB
    for (let batch = 0; batch < 8; batch++) {
      for (let i = 0; i < 52; i++) log.write(line);
      await new Promise((r) => setImmediate(r));
    }
    await log.close();
    const files = readdirSync(dir).sort();
    const backups = files.filter((f) => f !== 'audit.log');
    assert.equal(backups.length, 2, files.join(' '));
    for (const b of backups) assert.match(b, /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/);
    for (const f of files) assert.ok(readFileSync(join(dir, f)).length <= 1024 * 1024, `${f} within the limit`);
    for (const f of files)
      for (const l of readFileSync(join(dir, f), 'utf8').trimEnd().split('\n'))
        assert.equal(l, line, 'only whole lines');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--audit-log-maxage removes backups older than the given days at the next rotation', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-audit-age-'));
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(join(dir, 'audit-2020-01-01T00-00-00.000.log'), 'old\n');
    const old = new Date('2020-01-01T00:00:00Z');
    utimesSync(join(dir, 'audit-2020-01-01T00-00-00.000.log'), old, old);
    const log = new AuditLog({ path, maxSizeMB: 1, maxBackups: 0, maxAgeDays: 30 });
    const line = JSON.stringify({ pad: 'y'.repeat(100_000) });
    for (let i = 0; i < 12; i++) log.write(line);
    await log.close();
    const files = readdirSync(dir);
    assert.ok(!files.includes('audit-2020-01-01T00-00-00.000.log'), files.join(' '));
    assert.equal(files.filter((f) => f !== 'audit.log').length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
