/**
 * The front thread's scheduling under a watch fan-out, in process and without sockets:
 * `node dist/bench/scenarios/watch-fanout-latency.js [--rate 500] [--seconds 3] [--send-us 8]
 * [--hub PATH ...]`. A writer thread issues PUTs at --rate (at most 64 outstanding, as the watch
 * scenario's writer; later ones wait, stamped when due); the main thread (the front) hands each
 * to an actor thread, and on its reply dispatches the change to a WatchHub of 1,000 watchers
 * whose sends each take --send-us of busy time (what a corked uWS send costs here) and answers
 * the writer. Prints the PUT round trip and write-to-delivery (at the last watcher written) p50
 * and p99, the writes reached, sends per event and process CPU per event (after the warm-up). Each --hub (a compiled src/http/watch-hub.js, e.g. of a base
 * tree) runs in turn, alternating, twice; default: this tree's. Bounded: --seconds per run after
 * 1 s of warm-up. Wall-clock figures: on a loaded machine compare the hubs of the same run.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { Watcher } from '../../src/http/watch-hub.js';
import { benchWatcher } from '../lib/bench-watcher.js';

const WATCHERS = 1000;
const IN_FLIGHT = 64;
const now = (): number => performance.timeOrigin + performance.now();

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

type Msg = { id: number; t: number };

/** The writer: PUTs due at the rate, at most IN_FLIGHT outstanding; records round trips. */
function writer(rate: number, ms: number): void {
  const port = parentPort!;
  const due: Msg[] = [];
  const sent = new Map<number, number>();
  const rtt: number[] = [];
  let id = 0;
  let out = 0;
  const start = now();
  const pump = (): void => {
    while (out < IN_FLIGHT && due.length) {
      const m = due.shift()!;
      out++;
      sent.set(m.id, m.t);
      port.postMessage(m);
    }
  };
  port.on('message', (m: Msg | 'stop') => {
    if (m === 'stop') return port.postMessage({ rtt, issued: id });
    out--;
    rtt.push(now() - sent.get(m.id)!);
    sent.delete(m.id);
    pump();
  });
  const tick = setInterval(() => {
    const should = Math.floor(((now() - start) * rate) / 1000);
    while (id < should) due.push({ id: id++, t: now() });
    pump();
    if (now() - start > ms) clearInterval(tick);
  }, 1);
}

/** The actor: answers each op at once (the commit is not what is measured here). */
function actor(): void {
  parentPort!.on('message', (m: Msg) => parentPort!.postMessage(m));
}

function busy(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

interface Hub {
  add(w: Watcher): void;
  dispatch(evs: readonly ChangeEvent[]): void;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

async function run(hubPath: string, rate: number, seconds: number, sendUs: number): Promise<string> {
  const { WatchHub } = (await import(hubPath)) as { WatchHub: new (limit: number) => Hub };
  const hub = new WatchHub(1 << 30);
  const delivered: number[] = [];
  // sends over all watchers and front-thread CPU, from the end of the warm-up second
  let sends = 0;
  let counting = false;
  const json = (id: number, t: number): string =>
    JSON.stringify({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: `w-${id % 20}`, namespace: 'bench-watch', annotations: { t: String(t) } },
      data: { pad: 'x'.repeat(900) },
    });
  for (let i = 0; i < WATCHERS; i++) {
    const last = i === WATCHERS - 1;
    const w = benchWatcher({
      write: (c) => {
        if (counting) sends++;
        busy(sendUs);
        if (last) {
          const at = now();
          for (const m of String(typeof c === 'string' ? c : Buffer.from(c)).matchAll(/"t":"([\d.]+)"/g))
            delivered.push(at - Number(m[1]));
        }
        return 0;
      },
      close() {},
      abort() {},
    });
    hub.add(w);
  }
  const file = fileURLToPath(import.meta.url);
  const ms = (seconds + 1) * 1000;
  const actorT = new Worker(file, { workerData: { role: 'actor' } });
  const writerT = new Worker(file, { workerData: { role: 'writer', rate, ms } });
  let rv = 1;
  actorT.on('message', (m: Msg) => {
    hub.dispatch([
      {
        typeKey: '/configmaps',
        type: 'MODIFIED',
        rv: ++rv,
        namespace: 'bench-watch',
        name: `w-${m.id % 20}`,
        json: json(m.id, m.t),
        labels: undefined,
        fields: { 'metadata.name': `w-${m.id % 20}`, 'metadata.namespace': 'bench-watch' },
        apiVersion: 'v1',
        uid: 'u',
      },
    ]);
    writerT.postMessage(m);
  });
  writerT.on('message', (m: Msg | { rtt: number[]; issued: number }) => {
    if ('id' in m) actorT.postMessage(m);
  });
  await new Promise((r) => setTimeout(r, 1000));
  counting = true;
  const cpu0 = process.cpuUsage();
  const rv0 = rv;
  await new Promise((r) => setTimeout(r, ms - 1000));
  const cpu = process.cpuUsage(cpu0);
  const events = rv - rv0;
  counting = false;
  await new Promise((r) => setTimeout(r, 500));
  const result = new Promise<{ rtt: number[]; issued: number }>((r) =>
    writerT.on('message', (m: Msg | { rtt: number[]; issued: number }) => {
      if ('rtt' in m) r(m);
    }),
  );
  writerT.postMessage('stop');
  const { rtt } = await result;
  await Promise.all([actorT.terminate(), writerT.terminate()]);
  // the warm-up second left out
  const skip = (xs: number[]): number[] => xs.slice(Math.floor(xs.length / (seconds + 1)));
  const r = skip(rtt);
  const d = skip(delivered);
  return `${hubPath}: ${(rtt.length / (seconds + 1)).toFixed(0)} writes/s; PUT p50 ${pct(r, 50).toFixed(1)} p99 ${pct(r, 99).toFixed(1)} ms; write-to-delivery p50 ${pct(d, 50).toFixed(1)} p99 ${pct(d, 99).toFixed(1)} ms (${d.length} events); ${(sends / Math.max(1, events)).toFixed(0)} sends per event (of ${WATCHERS} watchers), process CPU ${((cpu.user + cpu.system) / Math.max(1, events)).toFixed(0)} µs per event`;
}

if (isMainThread) {
  const rate = Number(arg('rate', '500'));
  const seconds = Number(arg('seconds', '3'));
  const sendUs = Number(arg('send-us', '8'));
  const hubs = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--hub' ? [a] : []));
  if (!hubs.length) hubs.push(fileURLToPath(new URL('../../src/http/watch-hub.js', import.meta.url)));
  for (let round = 0; round < 2; round++)
    for (const h of hubs) process.stdout.write(`${await run(h, rate, seconds, sendUs)}\n`);
} else if ((workerData as { role: string }).role === 'writer') {
  const { rate, ms } = workerData as { rate: number; ms: number };
  writer(rate, ms);
} else actor();
