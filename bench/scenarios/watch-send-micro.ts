/**
 * The front thread's CPU per watch send over real loopback sockets, without the writer or the
 * actors: `node dist/bench/scenarios/watch-send-micro.js [--watchers 1000] [--flushes 400]
 * [--events 1,4,16]`. A uWS app in this process holds the watch streams; a forked process
 * (bench/watch-clients.ts) reads them. Per mode, each flush hands every stream the same frame
 * of N ~1.1 KB events; the figure is this thread's CPU (user + system, /proc) per stream per
 * flush, after a warm-up, so a busy machine inflates wall time, not it. Modes: `bare` is the
 * ceiling's `res.cork(() => res.write(bytes))`; `stream` is WatchStream.write; `hub` is a
 * WatchHub of the same watchers dispatching N events and flushing them (frames built per
 * flush, as in the server). Modes alternate, twice each. Bounded: --flushes per mode and run.
 */
import uWS from 'uWebSockets.js';
import type { HttpResponse } from 'uWebSockets.js';
import { readFileSync } from 'node:fs';
import { Clients } from './watch-drive.js';
import { WatchStream } from '../../src/http/watch-stream.js';
import { WatchHub } from '../../src/http/watch-hub.js';
import { benchWatcher } from '../lib/bench-watcher.js';
import type { Exchange } from '../../src/http/exchange.js';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { OpenReply, StatsReply } from '../watch-clients.js';
import { statField } from '../../src/metrics/process-metrics.js';
import { nowUs } from '../lib/stats.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

const WATCHERS = Number(arg('watchers', '1000'));
const FLUSHES = Number(arg('flushes', '400'));
const EVENTS = arg('events', '1,4,16').split(',').map(Number);
const WARMUP = 50;

/** This thread's CPU seconds (the main thread: its tid is the pid). */
function mainCpuSec(): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  return ((statField(stat, 14) ?? 0) + (statField(stat, 15) ?? 0)) / 100;
}

const json = (rv: number): string =>
  JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name: 'w-1',
      namespace: 'bench-watch',
      resourceVersion: String(rv),
      annotations: { 'bench-ts': String(nowUs()) },
    },
    data: { pad: 'x'.repeat(1000) },
  });

function changeEvent(rv: number): ChangeEvent {
  return {
    typeKey: '/configmaps',
    type: 'MODIFIED',
    rv,
    namespace: 'bench-watch',
    name: 'w-1',
    json: json(rv),
    labels: undefined,
    fields: { 'metadata.name': 'w-1', 'metadata.namespace': 'bench-watch' },
    apiVersion: 'v1',
    uid: 'u',
  } as ChangeEvent;
}

interface Held {
  res: HttpResponse;
  stream: WatchStream;
  x: Exchange;
}

/** One flush in each mode: hands every stream N events' frame. */
type Mode = (n: number) => void;

function modes(held: Held[], hub: WatchHub): Record<string, Mode> {
  let rv = 1;
  const frame = (n: number): Buffer =>
    Buffer.from(Array.from({ length: n }, () => `{"type":"MODIFIED","object":${json(++rv)}}\n`).join(''));
  return {
    bare: (n) => {
      const out = frame(n);
      for (const h of held) if (!h.x.aborted) h.res.cork(() => h.res.write(out));
    },
    stream: (n) => {
      const out = frame(n);
      for (const h of held) h.stream.write(out);
    },
    hub: (n) => {
      for (let i = 0; i < n; i++) hub.dispatch([changeEvent(++rv)]);
      hub.flush();
    },
  };
}

/** Runs flushes a turn apart (the clients read meanwhile); resolves with CPU µs per stream per flush. */
function measure(mode: Mode, n: number): Promise<number> {
  return new Promise((resolve) => {
    let i = 0;
    let cpu0 = 0;
    const step = (): void => {
      if (i === WARMUP) cpu0 = mainCpuSec();
      if (i === WARMUP + FLUSHES) return resolve(((mainCpuSec() - cpu0) * 1e6) / (FLUSHES * WATCHERS));
      mode(n);
      i++;
      setImmediate(step);
    };
    step();
  });
}

async function main(): Promise<void> {
  const held: Held[] = [];
  const hub = new WatchHub(1 << 30);
  const app = uWS.App();
  app.get('/*', (res) => {
    const x: Exchange = { res, aborted: false, done: false, headers: [] };
    res.onAborted(() => {
      x.aborted = true;
      x.onAbort?.();
    });
    const stream = new WatchStream(x, { format: 'json', pretty: false }).open('', 0);
    if (!stream) return;
    held.push({ res, stream, x });
    hub.add(benchWatcher(stream));
  });
  const port = await new Promise<number>((resolve) =>
    app.listen('127.0.0.1', 0, (sock) => resolve(uWS.us_socket_local_port(sock))),
  );
  const clients = new Clients();
  const open = await clients.ask<OpenReply>({
    cmd: 'open',
    url: `http://127.0.0.1:${port}/w`,
    count: WATCHERS,
    timeoutMs: 60_000,
  });
  if (open.opened !== WATCHERS) throw new Error(`opened ${open.opened} of ${WATCHERS}`);
  const ms = modes(held, hub);
  for (const n of EVENTS)
    for (let round = 0; round < 2; round++)
      for (const [name, mode] of Object.entries(ms)) {
        await clients.ask({ cmd: 'reset' });
        const us = await measure(mode, n);
        const st = await clients.ask<StatsReply>({ cmd: 'stats' });
        process.stdout.write(
          `${n} events per flush, ${name}: ${us.toFixed(2)} µs front CPU per send (clients ${((st.cpuSec * 1e6) / ((FLUSHES + WARMUP) * WATCHERS)).toFixed(2)} µs per send)\n`,
        );
      }
  await clients.close();
  process.exit(0);
}

void main();
