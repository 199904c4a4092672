/** bench:micro stays runnable as the in-process APIs it times change: every suite, a few ms per task. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

test('every micro suite runs and prints a row per task without errors', () => {
  const r = spawnSync(process.execPath, [resolve(process.cwd(), 'dist/bench/micro.js'), '--time', '10'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.split('\n').filter((l) => /^\| [a-z]/.test(l));
  for (const suite of ['codec', 'selectors', 'rbac', 'strategic merge', 'apply', 'fieldset'])
    assert.ok(
      rows.some((l) => l.startsWith(`| ${suite}:`)),
      suite,
    );
  assert.ok(rows.length >= 20, `${rows.length} rows`);
  for (const l of rows) assert.doesNotMatch(l, /error/, l);
  const bad = spawnSync(process.execPath, [resolve(process.cwd(), 'dist/bench/micro.js'), 'nope'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /unknown suite or flag nope/);
});
