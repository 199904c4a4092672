/**
 * The front thread's CPU per Pod change event in its read cache, in process: N density-sized Pod
 * events (≈ 2 KB of JSON each, half naming requests and limits), structured-cloned as the actor's
 * postMessage delivers them, fed to ReadCache.observe in batches of 64. Prints µs of process CPU
 * per event for each round (the cache's work and the garbage it makes: since the read cache keeps
 * only the most recent Pods' JSON, the rest is collected). With pod-quota.js present, also the
 * actor's cost of a Pod's quota summary (podQuotaOf) per Pod.
 *
 *   node dist/bench/read-cache-observe.js [--events 100000] [--rounds 5]
 */
import { ReadCache } from '../src/actors/read-cache.js';
import type { ChangeEvent } from '../src/actors/protocol.js';

const MAX_EVENTS = 1_000_000;
const BATCH = 64;

function arg(flag: string, d: number): number {
  const i = process.argv.indexOf(flag);
  const v = i >= 0 ? Number(process.argv[i + 1]) : d;
  if (!Number.isInteger(v) || v < 1 || v > MAX_EVENTS) throw new Error(`${flag}: 1..${MAX_EVENTS}`);
  return v;
}

const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '64Mi' } };
const pod = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `o-${i}`, namespace: `ns-${i % 10_000}`, uid: `uid-${i}`, labels: { bench: 'density' } },
  spec: {
    containers: [{ name: 'c', image: 'registry.example/pause:3.10', ...(i % 2 ? {} : { resources }) }],
    serviceAccountName: 'default',
    padding: 'x'.repeat(1700),
  },
  status: { phase: 'Pending' },
});

async function main(): Promise<void> {
  const n = arg('--events', 100_000);
  const rounds = arg('--rounds', 5);
  // absent on builds before the summaries (a base worktree runs this file against its own src)
  const pq = (await import('../src/actors/pod-quota.js').catch(() => undefined)) as
    | { podQuotaOf(pod: unknown): unknown }
    | undefined;
  const objs = Array.from({ length: n }, (_, i) => pod(i));
  if (pq)
    for (let r = 0; r < rounds; r++) {
      const t = process.cpuUsage();
      for (const o of objs) pq.podQuotaOf(o);
      const d = process.cpuUsage(t);
      process.stdout.write(`podQuotaOf: ${((d.user + d.system) / n).toFixed(2)} µs per Pod\n`);
    }
  const events = objs.map(
    (o, i): ChangeEvent => ({
      typeKey: '/pods',
      type: 'ADDED',
      rv: i + 1,
      namespace: o.metadata.namespace,
      name: o.metadata.name,
      json: JSON.stringify(o),
      labels: o.metadata.labels,
      fields: {},
      uid: o.metadata.uid,
      apiVersion: 'v1',
      ...(pq ? { quota: pq.podQuotaOf(o) as ChangeEvent['quota'] } : {}),
    }),
  );
  for (let r = 0; r < rounds; r++) {
    const cache = new ReadCache();
    const evs = structuredClone(events);
    const t = process.cpuUsage();
    for (let i = 0; i < n; i += BATCH) cache.observe(evs.slice(i, i + BATCH));
    const d = process.cpuUsage(t);
    process.stdout.write(
      `observe: ${((d.user + d.system) / n).toFixed(3)} µs per Pod event (${cache.count('/pods')} Pods held)\n`,
    );
  }
}

await main();
