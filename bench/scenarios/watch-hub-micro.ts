/**
 * In-process cost of the watch hub itself (framing, queueing, joining, handing bytes to each
 * watcher), without sockets: `node dist/bench/scenarios/watch-hub-micro.js [events per flush...]`.
 * 1,000 JSON watchers of one namespace with no selector (the watch scenario's shape) on sinks
 * that only count writes; each round dispatches N single-event batches (as N actor replies in
 * one pacing window) and flushes. Prints CPU µs per delivery (process CPU, so a busy machine
 * inflates wall time, not this figure) and the young-generation collections per 1,000 events
 * (run it with --max-semi-space-size=1, the front thread's young generation, to compare trees:
 * the hub's garbage per event); bounded: 2,000 rounds after 50 of warm-up.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { WatchHub } from '../../src/http/watch-hub.js';
import { benchWatcher } from '../lib/bench-watcher.js';
import type { ChangeEvent } from '../../src/actors/protocol.js';

const WATCHERS = 1000;
const ROUNDS = 2000;
const WARMUP = 50;

let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === 1) scavenges++;
}).observe({ entryTypes: ['gc'] });
/** GC entries are delivered on a later turn */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

async function measure(eventsPerFlush: number): Promise<{ us: number; scavengesPer1000: number }> {
  const hub = new WatchHub(1 << 30);
  let writes = 0;
  for (let i = 0; i < WATCHERS; i++) {
    const w = benchWatcher({
      write: () => {
        writes++;
        return 0;
      },
      close() {},
      abort() {},
    });
    hub.add(w);
  }
  const json = JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'w-1', namespace: 'bench-watch' },
    data: { pad: 'x'.repeat(900) },
  });
  let rv = 1;
  const event = (): ChangeEvent => ({
    typeKey: '/configmaps',
    type: 'MODIFIED',
    rv: ++rv,
    namespace: 'bench-watch',
    name: 'w-1',
    json,
    labels: undefined,
    fields: { 'metadata.name': 'w-1', 'metadata.namespace': 'bench-watch' },
    apiVersion: 'v1',
    uid: 'u',
  });
  const round = (): void => {
    for (let e = 0; e < eventsPerFlush; e++) hub.dispatch([event()]);
    hub.flush();
  };
  for (let i = 0; i < WARMUP; i++) round();
  await settle();
  const gc0 = scavenges;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) round();
  const cpu = process.cpuUsage(cpu0);
  await settle();
  if (writes !== (ROUNDS + WARMUP) * WATCHERS)
    throw new Error(`expected one write per watcher per flush, got ${writes}`);
  return {
    us: (cpu.user + cpu.system) / (ROUNDS * eventsPerFlush * WATCHERS),
    scavengesPer1000: ((scavenges - gc0) * 1000) / (ROUNDS * eventsPerFlush),
  };
}

const counts = process.argv.slice(2).map(Number);
for (const n of counts.length ? counts : [1, 5, 10, 20]) {
  const m = await measure(n);
  process.stdout.write(
    `${n} events per flush: ${m.us.toFixed(3)} µs CPU per delivery, ${m.scavengesPer1000.toFixed(1)} young-generation collections per 1,000 events\n`,
  );
}
