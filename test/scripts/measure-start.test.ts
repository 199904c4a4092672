/**
 * scripts/measure-start.mjs (what a test pays per server start and stop): one start of this
 * tree's server, to /readyz and through a graceful stop, and one failing start, as JSON.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

interface Figures {
  median: number;
  p90: number;
}
interface Report {
  fail: boolean;
  summary: { tree: string; runs: number; listen: Figures; ready?: Figures; cpu?: Figures; stop?: Figures }[];
}

function measure(...args: string[]): Report {
  const r = spawnSync(process.execPath, ['scripts/measure-start.mjs', '--json', '--timeout', '120', ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Report;
}

test('a start: listening line, then /readyz, CPU when ready, then the stop', () => {
  const { fail, summary } = measure('--runs', '1', '--writes', '2');
  assert.equal(fail, false);
  assert.equal(summary.length, 1);
  const s = summary[0]!;
  assert.equal(s.runs, 1);
  assert.ok(s.listen.median > 0);
  assert.ok(s.ready!.median >= s.listen.median, 'ready comes after the listening line');
  assert.ok(s.cpu!.median > 0);
  assert.ok(s.stop!.median > 0);
});

test('--fail: a start refused with exit 1', () => {
  const { fail, summary } = measure('--runs', '1', '--fail');
  assert.equal(fail, true);
  assert.ok(summary[0]!.listen.median > 0);
  assert.equal(summary[0]!.stop, undefined);
});
