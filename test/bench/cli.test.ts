/**
 * The bench command line (issue 20 item 8): `--help` answers without a stack, every run
 * prints which mode runs and why, a bad command line is one line, and the charts have
 * axis ticks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { tickStep } from '../../bench/load/svg.js';

const RUN = resolve(process.cwd(), 'dist/bench/run.js');
const bench = (args: string[]) => spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8', timeout: 60_000 });

test('--help: the usage of both modes, exit 0, no stack', () => {
  const r = bench(['--help']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /wrk ceiling mode/);
  assert.match(r.stdout, /load CLI mode/);
  assert.match(r.stdout, /--record appends the results to docs\/benchmarks\.md/);
  assert.equal(r.stderr, '');
});

test('the mode and its reason come first; a bad command line is one line', () => {
  const wrk = bench(['nope']);
  assert.equal(wrk.status, 2);
  assert.match(wrk.stdout, /^mode: wrk ceiling mode .*no load-only scenario or flag given/);
  assert.equal(
    wrk.stderr,
    'bench: unknown scenario "nope" (known: get, list, create, watch, apply, tls, authz, encodings, fairness)\n',
  );
  const shards = bench(['create', '--shards', '0']);
  assert.equal(shards.status, 2);
  assert.equal(shards.stderr, 'bench: --shards must be an integer in 1..16\n');
  const load = bench(['density', '--duration', 'x']);
  assert.match(load.stdout, /^mode: load CLI .*because density is a load-only scenario or flag/);
  assert.doesNotMatch(load.stderr, /\n\s+at /);
});

test('tick steps are 1, 2 or 5 × 10^k', () => {
  assert.equal(tickStep(60), 10);
  assert.equal(tickStep(7), 1);
  assert.equal(tickStep(1500), 200);
});
