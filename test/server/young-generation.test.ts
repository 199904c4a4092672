/**
 * src/server/young-generation.ts: the server's front thread grows its young generation to
 * FRONT_NEW_SPACE_MB and no further (at most one doubling past it, when a scavenge falls between
 * a Worker start resetting the flag and its re-set) under a load that grows it to 32 MB by
 * default, and an explicit young-generation flag is left alone. The server is the real one (dist/src/main.js);
 * a preload (test/fixtures/heap-probe.ts) reports its new space's size on SIGUSR2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'node:http';
import { startServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { Worker } from 'node:worker_threads';
import {
  FRONT_NEW_SPACE_MB,
  WORKER_SEMI_SPACE_MB,
  capYoungGeneration,
  explicitYoungGeneration,
} from '../../src/server/young-generation.js';

const PROBE = resolve(process.cwd(), 'dist/test/fixtures/heap-probe.js');
const WATCHERS = 200;
const MB = 1024 * 1024;

/** Opens watchers (each keeps a few KB live: what grows a default young generation), returns a closer. */
async function openWatchers(s: TestServer, n: number): Promise<() => void> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const reqs = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof request>>((ok, fail) => {
          const r = request(`${s.url}/api/v1/namespaces/default/configmaps?watch=1`, { agent }, (res) => {
            assert.equal(res.statusCode, 200);
            ok(r);
          });
          r.on('error', fail);
          r.end();
        }),
    ),
  );
  return () => {
    for (const r of reqs) r.destroy();
    agent.destroy();
  };
}

async function newSpaceAfterLoad(env: Record<string, string>): Promise<number> {
  const s = await startServer([], undefined, env);
  try {
    const close = await openWatchers(s, WATCHERS);
    try {
      const before = s.stderr().length;
      s.proc.kill('SIGUSR2');
      const m = await until(
        async () => /heap-probe new_space=(\d+)/.exec(s.stderr().slice(before)) ?? undefined,
        'the heap probe',
      );
      return Number(m[1]);
    } finally {
      close();
    }
  } finally {
    await s.stop();
    s.cleanup();
  }
}

test('the front thread keeps its young generation at most one doubling past the target while watchers open', async () => {
  const size = await newSpaceAfterLoad({ NODE_OPTIONS: `--import=${PROBE}` });
  assert.ok(size <= 2 * FRONT_NEW_SPACE_MB * MB, `new space ${size} bytes`);
});

/**
 * The largest new space a fresh process reaches while it allocates objects of which a third
 * survive a while (what makes V8 double the young generation: 1 MB to 32 MB by default), in
 * event loop turns as a server does (the module re-sets its flag after each GC, between turns),
 * with the module imported first as src/main.ts does, or without it.
 */
function newSpaceUnderRetention(capped: boolean): number {
  const code = `const { getHeapSpaceStatistics } = require('node:v8');
    const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const keep = [];
    let max = 0;
    let i = 0;
    const turn = () => {
      for (const end = i + 2000; i < end; i++) {
        const o = { a: i, b: 'x' + i };
        if (i % 3 === 0) keep.push(o);
        if (keep.length > 200000) keep.splice(0, 100000);
      }
      max = Math.max(max, size());
      if (i < 600000) setImmediate(turn);
      else process.stdout.write(String(max));
    };
    turn();`;
  const module = pathToFileURL(resolve(process.cwd(), 'dist/src/server/young-generation.js')).href;
  const args = capped ? ['--import', module, '-e', code] : ['-e', code];
  return Number(execFileSync(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8' }));
}

test('under retention the front thread grows its young generation to the target and stops there', () => {
  const uncapped = newSpaceUnderRetention(false);
  assert.ok(uncapped > 2 * FRONT_NEW_SPACE_MB * MB, `uncapped new space ${uncapped} bytes (the load must grow it)`);
  const capped = newSpaceUnderRetention(true);
  assert.ok(capped >= FRONT_NEW_SPACE_MB * MB, `capped new space ${capped} bytes: below the target`);
  assert.ok(capped <= FRONT_NEW_SPACE_MB * MB, `capped new space ${capped} bytes: past the target`);
});

test('an explicit --max-semi-space-size is left to V8 (the young generation grows up to it)', async () => {
  const size = await newSpaceAfterLoad({ NODE_OPTIONS: `--import=${PROBE} --max-semi-space-size=8` });
  assert.ok(size > 4 * MB, `new space ${size} bytes`);
});

test('explicit young-generation flags are recognised on the command line and in NODE_OPTIONS', () => {
  assert.equal(explicitYoungGeneration(['--max-semi-space-size=4'], undefined), true);
  assert.equal(explicitYoungGeneration([], '--min_semi_space_size=2 --import=x'), true);
  assert.equal(explicitYoungGeneration([], '--semi-space-growth-factor=2'), true);
  assert.equal(explicitYoungGeneration(['--enable-source-maps'], '--max-old-space-size=4096'), false);
});

test('a Worker started after the cap (shard actor, decoder) starts with a full-size young generation', async () => {
  // importing the module capped this process as it caps the server's; a Worker's heap is set up
  // after that and takes --min-semi-space-size, where by default it would start at 2 MB
  assert.equal(capYoungGeneration(), !explicitYoungGeneration(process.execArgv, process.env.NODE_OPTIONS));
  const code = `const { getHeapSpaceStatistics } = require('node:v8');
    require('node:worker_threads').parentPort.postMessage(
      getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);`;
  const w = new Worker(code, { eval: true });
  const size = await new Promise<number>((ok, fail) => {
    w.once('message', ok);
    w.once('error', fail);
  });
  await w.terminate();
  assert.ok(size >= WORKER_SEMI_SPACE_MB * MB, `worker new space ${size} bytes`);
});
