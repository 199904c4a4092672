/**
 * src/server/heap-growth.ts: with the module imported first (as src/main.ts does) and the process
 * past its RSS threshold (PLAT_HEAP_CAP_ABOVE_MB=0 here), a thread's old generation grows to about
 * 1 + HEAP_GROWING_PERCENT / 100 times its live size under a load that keeps a growing live set
 * and churns garbage that is promoted before it dies (what the shard actors and the front do while
 * Pods are created), in the main thread and in a Worker started afterwards (the shard actors);
 * below the threshold (the default 512 MiB: this load stays under it) V8's own factor lets it
 * grow further. An explicit flag is recognised.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { HEAP_GROWING_PERCENT, explicitHeapGrowing } from '../../src/server/heap-growth.js';

/** the capped ratio's bound: the factor plus room for what is allocated while a collection runs */
const BOUND = 1 + HEAP_GROWING_PERCENT / 100 + 0.1;

/**
 * A load in event loop turns: a quarter of its 200-byte strings kept for good (≈ 100 MB in
 * all), every object also held in a ring of 20,000 for a while (promoted, then garbage). Answers
 * the old space's largest size over the live size a full collection leaves at the end.
 */
const LOAD = `const { getHeapSpaceStatistics } = require('node:v8');
  const old = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  const live = [];
  let ring = new Array(20000);
  let max = 0;
  let i = 0;
  const turn = () => {
    for (const end = i + 5000; i < end; i++) {
      const s = 'y'.repeat(200) + i;
      if (i % 4 === 0) live.push(s);
      ring[i % ring.length] = { s: s + 'z', n: i, a: [i, i + 1] };
    }
    max = Math.max(max, old().space_size);
    if (i < 1500000) return setImmediate(turn);
    ring = null;
    globalThis.gc();
    REPLY(String(max / old().space_used_size));
  };
  turn();`;

const MODULE = pathToFileURL(resolve(process.cwd(), 'dist/src/server/heap-growth.js')).href;

/** capAboveMb: PLAT_HEAP_CAP_ABOVE_MB for the child (undefined: the default threshold) */
function ratio(capAboveMb: number | undefined, inWorker: boolean): number {
  const inMain = LOAD.replace('REPLY(', 'process.stdout.write(');
  const code = inWorker
    ? `const { Worker } = require('node:worker_threads');
       const w = new Worker(${JSON.stringify(LOAD.replace('REPLY(', "require('node:worker_threads').parentPort.postMessage("))}, { eval: true });
       w.once('message', (m) => { process.stdout.write(m); w.terminate(); });`
    : inMain;
  const env: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: '' };
  delete env.PLAT_HEAP_CAP_ABOVE_MB;
  if (capAboveMb !== undefined) env.PLAT_HEAP_CAP_ABOVE_MB = String(capAboveMb);
  const args = ['--expose-gc', '--import', MODULE, '-e', code];
  return Number(execFileSync(process.execPath, args, { env, encoding: 'utf8' }));
}

test('past the RSS threshold the old generation grows to about the capped factor times its live size; below it V8 lets it grow further', () => {
  const below = ratio(undefined, false);
  const capped = ratio(0, false);
  assert.ok(capped <= BOUND, `capped: old space peaked at ${capped.toFixed(2)}x its live size`);
  assert.ok(below > capped + 0.2, `below the threshold ${below.toFixed(2)}x against capped ${capped.toFixed(2)}x`);
});

test('a Worker started after the module is imported (a shard actor) is capped too', () => {
  const capped = ratio(0, true);
  assert.ok(capped <= BOUND, `capped worker: old space peaked at ${capped.toFixed(2)}x its live size`);
});

test('an explicit growing factor is recognised on the command line and in NODE_OPTIONS', () => {
  assert.equal(explicitHeapGrowing(['--heap-growing-percent=20'], undefined), true);
  assert.equal(explicitHeapGrowing([], '--heap_growing_percent=80 --import=x'), true);
  assert.equal(explicitHeapGrowing(['--max-semi-space-size=4'], '--max-old-space-size=4096'), false);
});
