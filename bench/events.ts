/**
 * `node dist/bench/events.js [--count 3000] [--ttl 5s]`
 *
 * Two figures for Event leases, each against a fresh server process on a free loopback port:
 * 1. create throughput of core Events (each write also stores its lease key) against ConfigMaps
 *    of about the same size, 32 clients, alternated for two rounds (other load on the machine
 *    shifts either);
 * 2. expiry: --count Events created with --event-ttl --ttl, then how long after the last lease
 *    ran out the namespace's Event list is empty (polled every 100 ms, bounded to 60 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../src/server/options.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const CLIENTS = 32;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

async function start(args: string[]): Promise<{ url: string; proc: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-events-'));
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, proc, dir };
}

function stop(s: { proc: ChildProcess; dir: string }): void {
  s.proc.kill('SIGKILL');
  rmSync(s.dir, { recursive: true, force: true });
}

const MESSAGE = 'x'.repeat(120);
const BODIES: Record<string, (name: string) => unknown> = {
  events: (name) => ({
    metadata: { name },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'R',
    message: MESSAGE,
    type: 'Normal',
    count: 1,
  }),
  configmaps: (name) => ({
    metadata: { name },
    data: { reason: 'R', message: MESSAGE, kind: 'Pod', name: 'p', type: 'Normal' },
  }),
};

/** POSTs n objects with CLIENTS concurrent clients; returns the rate and latency percentiles. */
async function createMany(
  url: string,
  resource: string,
  n: number,
  prefix: string,
): Promise<{ rate: number; p50: number; p99: number }> {
  let next = 0;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const r = await fetch(`${url}/api/v1/namespaces/default/${resource}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(BODIES[resource]!(`${prefix}-${i}`)),
        });
        await r.arrayBuffer();
        if (r.status !== 201) throw new Error(`${resource}: HTTP ${r.status}`);
        lat.push(performance.now() - s);
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return {
    rate: n / ((performance.now() - t0) / 1000),
    p50: lat[Math.floor(n * 0.5)]!,
    p99: lat[Math.floor(n * 0.99)]!,
  };
}

async function throughput(n: number): Promise<void> {
  const s = await start([]);
  try {
    for (const [round, order] of [
      [1, ['events', 'configmaps']],
      [2, ['configmaps', 'events']],
    ] as const) {
      for (const resource of order) {
        const r = await createMany(s.url, resource, n, `r${round}`);
        console.log(
          `| create ${resource} | round ${round} | ${r.rate.toFixed(0)}/s | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`,
        );
      }
    }
  } finally {
    stop(s);
  }
}

async function expiry(n: number, ttl: string): Promise<void> {
  const ttlMs = parseDuration(ttl);
  if (ttlMs === undefined) throw new Error(`--ttl must be a duration, got "${ttl}"`);
  const s = await start(['--event-ttl', ttl]);
  try {
    const t0 = Date.now();
    await createMany(s.url, 'events', n, 'x');
    const lastLeaseEnds = Date.now() + ttlMs;
    console.log(`created ${n} Events in ${Date.now() - t0} ms`);
    const deadline = lastLeaseEnds + 60_000;
    while (Date.now() < deadline) {
      const l = (await (await fetch(`${s.url}/api/v1/namespaces/default/events?limit=1`)).json()) as any;
      const left = l.items.length ? (l.metadata.remainingItemCount ?? 0) + 1 : 0;
      if (left === 0) {
        console.log(
          `all ${n} expired ${Date.now() - lastLeaseEnds} ms after the last lease ran out (poll every 100 ms)`,
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log('not all expired within 60 s of the last lease');
  } finally {
    stop(s);
  }
}

const count = Number(arg('count', '3000'));
if (!Number.isInteger(count) || count < 1 || count > 100_000)
  throw new Error('--count must be an integer in 1..100000');
console.log('| Operation | Round | Throughput | p50 (ms) | p99 (ms) |\n| --- | --- | ---: | ---: | ---: |');
await throughput(count);
await expiry(count, arg('ttl', '5s'));
