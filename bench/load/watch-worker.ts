/**
 * A worker thread of the watch-fanout scenario: opens its share of the watches with its own
 * event loop, so reading events does not delay the writer (or the other watchers) on one
 * loop. Reads each MODIFIED event's send stamp (epoch ms, performance.timeOrigin + now(), the
 * same clock in every thread) without parsing the event, and records write-to-delivery
 * latency. Messages: to the parent `{type: 'open', status}` per watch, `{type: 'count',
 * delivered}` at most every 100 ms, then after a `close` message `{type: 'done', delivered,
 * latency, watches}`.
 */
import http from 'node:http';
import https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { Hdr } from './hdr.js';

export interface WatchWorkerInit {
  url: string;
  count: number;
  headers: Record<string, string>;
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean };
  /** the annotation key whose value is the send stamp */
  sentKey: string;
}

export interface WatchWorkerDone {
  type: 'done';
  delivered: number;
  latency: [number, number][];
  watches: { status: number; ms: number; bytes: number }[];
}

export const now = (): number => performance.timeOrigin + performance.now();

/** The send stamp of a MODIFIED event line, read without parsing the whole event. */
export function sentOf(line: string, key: string): number | undefined {
  // the server writes a space ahead of the first event (to flush the response head)
  if (!line.startsWith('{"type":"MODIFIED"') && !line.trimStart().startsWith('{"type":"MODIFIED"')) return undefined;
  const i = line.indexOf(key);
  if (i < 0) return undefined;
  const v = Number(line.slice(i + key.length, line.indexOf('"', i + key.length)));
  return Number.isFinite(v) ? v : undefined;
}

function run(init: WatchWorkerInit): void {
  const url = new URL(init.url);
  const mod = url.protocol === 'https:' ? https : http;
  const agent =
    url.protocol === 'https:'
      ? new https.Agent({ keepAlive: false, maxSockets: Infinity, ...init.tls })
      : new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const key = `"${init.sentKey}":"`;
  const latency = new Hdr();
  let delivered = 0;
  const watches: WatchWorkerDone['watches'] = [];
  const reqs: http.ClientRequest[] = [];
  let pending = init.count;
  let closing = false;
  const finished = (): void => {
    if (--pending === 0 && closing)
      parentPort!.postMessage({
        type: 'done',
        delivered,
        latency: latency.sparse(),
        watches,
      } satisfies WatchWorkerDone);
  };
  for (let i = 0; i < init.count; i++) {
    const t0 = performance.now();
    const w = { status: 0, ms: 0, bytes: 0 };
    let done = false;
    const end = (): void => {
      if (done) return;
      done = true;
      w.ms = performance.now() - t0;
      watches.push(w);
      finished();
    };
    const req = mod.request(url, { agent, headers: { ...init.headers, accept: 'application/json' } }, (res) => {
      w.status = res.statusCode ?? 0;
      parentPort!.postMessage({ type: 'open', status: w.status });
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        const at = now();
        w.bytes += Buffer.byteLength(d);
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const sent = sentOf(buf.slice(0, nl), key);
          buf = buf.slice(nl + 1);
          if (sent !== undefined) {
            delivered++;
            latency.recordMs(at - sent);
          }
        }
      });
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
    req.on('error', () => {
      if (w.status === 0) parentPort!.postMessage({ type: 'open', status: 0 });
      end();
    });
    req.end();
    reqs.push(req);
  }
  // the running count, for the parent's wait for the last deliveries
  let reported = 0;
  setInterval(() => {
    if (delivered !== reported) parentPort!.postMessage({ type: 'count', delivered: (reported = delivered) });
  }, 100).unref();
  parentPort!.on('message', (m: { type: string }) => {
    if (m.type !== 'close') return;
    closing = true;
    if (pending === 0) {
      pending = 1;
      finished();
      return;
    }
    for (const r of reqs) r.destroy();
  });
}

if (parentPort && workerData) run(workerData as WatchWorkerInit);
