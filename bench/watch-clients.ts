/**
 * Watch clients for the watch scenario, forked by bench/run.ts so their parsing does not
 * compete with the writer's event loop. Opens N watch streams on raw loopback sockets (cheaper
 * than http.ClientRequest per chunk, and the response head is seen before any event), counts
 * events (bench/watch-lines.ts) and, from the
 * `bench-ts` annotation each update carries (microseconds of the system monotonic clock, the
 * same in every process), records write-to-delivery latency. Commands and replies travel
 * over the IPC channel.
 */
import net from 'node:net';
import { Histogram, nowUs } from './lib/stats.js';
import { LineCounter } from './watch-lines.js';

export type ClientCommand =
  | { cmd: 'open'; url: string; count: number; timeoutMs: number }
  | { cmd: 'reset' }
  | { cmd: 'stats' }
  | { cmd: 'close' };

export interface OpenReply {
  reply: 'open';
  opened: number;
  failed: number;
  statuses: Record<string, number>;
}
export interface StatsReply {
  reply: 'stats';
  events: number;
  bytes: number;
  /** monotonic microseconds of the first and last event since the last reset */
  firstAtUs: number;
  lastAtUs: number;
  ended: number;
  /** CPU time this client process used since the last reset, in seconds */
  cpuSec: number;
  latency: [number, number][];
}
export type ClientReply = OpenReply | StatsReply | { reply: 'reset' } | { reply: 'closed' };

interface Watch {
  socket: net.Socket;
  lines: LineCounter;
}

const watches: Watch[] = [];
let hist = new Histogram();
let events = 0;
let bytes = 0;
let firstAtUs = 0;
let lastAtUs = 0;
let ended = 0;
let cpuAtReset = process.cpuUsage();

/** An event line's latency, from its bench-ts annotation (none: not recorded). */
function record(benchTsUs: number, now: number): void {
  if (benchTsUs > 0) hist.record((now - benchTsUs) / 1000);
}

/** Reads one chunk of a stream: counts its complete event lines and records their latency. */
function consume(w: Watch, chunk: Buffer): void {
  bytes += chunk.length;
  const now = nowUs();
  const seen = w.lines.consume(chunk, now);
  if (seen === 0) return;
  events += seen;
  if (firstAtUs === 0) firstAtUs = now;
  lastAtUs = now;
}

function open(url: string, count: number, timeoutMs: number): Promise<OpenReply> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error('watch clients stay on loopback');
  const head = Buffer.from(
    `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nAccept: application/json\r\n\r\n`,
  );
  const statuses: Record<string, number> = {};
  let opened = 0;
  let failed = 0;
  return new Promise((resolve) => {
    const settle = (): void => {
      if (opened + failed === count) {
        clearTimeout(timer);
        resolve({ reply: 'open', opened, failed, statuses });
      }
    };
    const timer = setTimeout(() => resolve({ reply: 'open', opened, failed: count - opened, statuses }), timeoutMs);
    for (let i = 0; i < count; i++) {
      const socket = net.connect({ host: '127.0.0.1', port: Number(target.port) });
      const w: Watch = { socket, lines: new LineCounter(record) };
      let counted = false;
      socket.on('connect', () => socket.write(head));
      socket.on('data', (c: Buffer) => {
        if (!counted) {
          counted = true;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(c.subarray(0, 16).toString('latin1'))?.[1] ?? 'none';
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === '200') opened++;
          else {
            failed++;
            socket.destroy();
          }
          settle();
        }
        consume(w, c);
      });
      socket.on('close', () => {
        ended++;
      });
      socket.on('error', () => {
        if (!counted) {
          counted = true;
          failed++;
          settle();
        }
      });
      watches.push(w);
    }
  });
}

function handle(m: ClientCommand): void {
  const send = (r: ClientReply): void => {
    process.send!(r);
  };
  switch (m.cmd) {
    case 'open':
      void open(m.url, m.count, m.timeoutMs).then(send);
      return;
    case 'reset':
      hist = new Histogram();
      events = 0;
      bytes = 0;
      firstAtUs = 0;
      lastAtUs = 0;
      cpuAtReset = process.cpuUsage();
      return send({ reply: 'reset' });
    case 'stats': {
      const cpu = process.cpuUsage(cpuAtReset);
      return send({
        reply: 'stats',
        events,
        bytes,
        firstAtUs,
        lastAtUs,
        ended,
        cpuSec: (cpu.user + cpu.system) / 1e6,
        latency: hist.sparse(),
      });
    }
    case 'close':
      for (const w of watches) w.socket.destroy();
      send({ reply: 'closed' });
      process.disconnect?.();
      return;
  }
}

if (process.send) {
  process.on('message', (m) => handle(m as ClientCommand));
  process.on('disconnect', () => process.exit(0));
}
