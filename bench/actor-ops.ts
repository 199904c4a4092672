/**
 * The shard actor's cost per write, in process (no threads, no HTTP): batches of durable
 * ConfigMap creates (the create scenario's ~1 KB body) or server-side applies of the apply
 * scenario's 3-container Deployment by its two managers, run through Shard.run as the front
 * thread sends them. Prints ops/s and CPU µs per op of this process; run it with --cpu-prof
 * to see where a write's actor time goes without the front thread's or the machine's noise.
 *
 *   node dist/bench/actor-ops.js create|apply [--seconds 3] [--batch 64] [--inflight 1] [--batches N]
 *
 * --batches N runs exactly N batches per lane instead of for --seconds: a fixed amount of work,
 * whose CPU per op and garbage collections (young-generation scavenges count the bytes
 * allocated) compare two builds on a loaded machine better than a rate does.
 *
 * --inflight N keeps N batches in flight (the pool's pipeline depth): a batch executes while
 * the one before commits, so ops/s shows the overlap and CPU/op what it costs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../src/actors/shard.js';
import type { Op } from '../src/actors/protocol.js';
import { DEFAULT_OPTIONS } from '../src/server/options.js';
import { actorPoolConfig } from '../src/server/shards.js';
import { makeIdentity } from '../src/api/identity.js';
import { deployerBody, scalerBody } from './scenarios/apply.js';
import { threadCpuTicks } from '../src/metrics/process-metrics.js';

const MAX_SECONDS = 60;

function newShard(dir: string): Shard {
  const o = { ...DEFAULT_OPTIONS, dataDir: dir, shards: 1, storageBackend: 'lmdb' as const };
  return new Shard({ ...actorPoolConfig(o, makeIdentity(o.apiDomain)), shard: 0, rvBuffer: new SharedArrayBuffer(8) });
}

const enc = { format: 'json', pretty: false } as const;
const user = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };
const pad = 'x'.repeat(880);
let nextId = 1;

function createOp(name: string): Op {
  const text = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","labels":{"bench":"create"}},"data":{"pad":"${pad}"}}`;
  return {
    id: nextId++,
    op: 'create',
    type: { group: '', version: 'v1', resource: 'configmaps' },
    enc,
    dryRun: false,
    namespace: 'default',
    fieldManager: 'wrk',
    user,
    body: { text, contentType: 'json' },
  };
}

function applyOp(name: string, k: number): Op {
  const scaler = k % 2 === 1;
  return {
    id: nextId++,
    op: 'patch',
    type: { group: 'apps', version: 'v1', resource: 'deployments' },
    enc,
    dryRun: false,
    namespace: 'default',
    name,
    patchType: 'apply',
    text: scaler ? scalerBody(name, k) : deployerBody(name, k),
    force: scaler,
    fieldManager: scaler ? 'autoscaler' : 'deployer',
    user,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const what = args[0];
  if (what !== 'create' && what !== 'apply')
    throw new Error('usage: node dist/bench/actor-ops.js create|apply [--seconds 3] [--batch 64]');
  const num = (flag: string, d: number) => {
    const i = args.indexOf(flag);
    return i >= 0 ? Number(args[i + 1]) : d;
  };
  const seconds = Math.min(MAX_SECONDS, num('--seconds', 3));
  const batch = num('--batch', 64);
  const inflight = Math.max(1, num('--inflight', 1));
  const batches = num('--batches', 0);
  const dir = mkdtempSync(join(tmpdir(), 'plat-actor-ops-'));
  try {
    const shard = newShard(dir);
    await shard.init();
    const names = Array.from({ length: batch }, (_, i) => `d-${i}`);
    let round = 0;
    const ops = (): Op[] => {
      round++;
      return what === 'create' ? names.map((n) => createOp(`${n}-${round}`)) : names.map((n) => applyOp(n, round));
    };
    // warm-up: the JIT, and for apply the objects both managers then change
    for (const end = performance.now() + 1000; performance.now() < end; ) await shard.run(ops());
    const gcs = { minor: 0, major: 0 };
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++;
        else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcs.major++;
      }
    });
    gc.observe({ entryTypes: ['gc'] });
    const cpu0 = process.cpuUsage();
    const ticks0 = threadCpuTicks();
    const t0 = performance.now();
    let done = 0;
    let failed = 0;
    const lane = async (): Promise<void> => {
      const limit = (batches ? MAX_SECONDS : seconds) * 1000;
      for (let n = 0; (!batches || n < batches) && performance.now() - t0 < limit; n++) {
        const r = await shard.run(ops());
        done += r.results.length;
        failed += r.results.filter((x) => 'error' in x).length;
      }
    };
    await Promise.all(Array.from({ length: inflight }, lane));
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    // this thread (the actor's) apart from the process: LMDB's writer and compression, GC helpers
    const mainTicks = (threadCpuTicks().get(String(process.pid)) ?? 0) - (ticks0.get(String(process.pid)) ?? 0);
    await new Promise((r) => setImmediate(r)); // the observer's last entries
    gc.disconnect();
    const us = (cpu.user + cpu.system) / done;
    const mainUs = (mainTicks * 1e4) / done; // clock ticks of 10 ms
    process.stdout.write(
      `${what}: ${done} ops in ${elapsed.toFixed(1)} s, ${(done / elapsed).toFixed(0)} ops/s, ${us.toFixed(1)} µs CPU/op (this thread ${mainUs.toFixed(1)}) (batches of ${batch}, ${inflight} in flight), ${failed} failed, GC ${gcs.minor} minor ${gcs.major} major\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
