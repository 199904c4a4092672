/** bench/scaling.ts stays runnable: its flags, and its table divides list CPU by the items per page. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs, scalingTable, type SizeResult } from '../../bench/scaling.js';
import type { Measured } from '../../bench/scenarios/common.js';

const measured = (reqPerSec: number, cpuUs: number, mainUs: number): Measured => ({
  command: 'wrk',
  requests: 1,
  reqPerSec,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  raw: '',
  cpuUsPerRequest: cpuUs,
  mainCpuUsPerRequest: mainUs,
});

test('flags: default sizes, --sizes adds a million, bad values are usage errors', () => {
  assert.deepEqual(parseArgs([]), { sizes: [1000, 100_000], durationSec: 3, record: false });
  assert.deepEqual(parseArgs(['--sizes', '1000,100_000,1000000', '--duration', '5s', '--record']), {
    sizes: [1000, 100_000, 1_000_000],
    durationSec: 5,
    record: true,
  });
  assert.throws(() => parseArgs(['--sizes', '999']), /two full pages/);
  assert.throws(() => parseArgs(['--duration', '0s']), /--duration/);
  assert.throws(() => parseArgs(['--nope']), /unknown argument --nope/);
  const bad = spawnSync(process.execPath, [resolve(process.cwd(), 'dist/bench/scaling.js'), '--sizes', 'x'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^scaling: --sizes takes integers/);
});

test('the table has a row per size with CPU per GET and per listed item', () => {
  const r: SizeResult = {
    n: 100_000,
    fillSec: 50,
    rssFill: 512 * 2 ** 20,
    rssEnd: 600 * 2 ** 20,
    get: measured(20_000, 25, 20),
    nsList: measured(300, 1000, 250),
    firstPage: measured(400, 1500, 500),
    nextPage: measured(350, 2000, 600),
  };
  const lines = scalingTable([r]).split('\n');
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^\| objects stored \| fill \(creates\/s\) \| RSS after fill \(MiB\) \| GET req\/s \|/);
  assert.equal(
    lines[2],
    '| 100,000 | 2,000 | 512 | 20,000 | 25.0 (20.0) | 300 | 2.00 (0.50) | 400 | 3.00 (1.00) | 350 | 4.00 (1.20) | 600 | 0 |',
  );
});
