/**
 * Throughput to a node agent through the server vs directly, in one run:
 * `npm run build --silent && node dist/bench/node-agents.js [--mb 256] [--rounds 3] [--only logs|pf] [--cpu-prof DIR]`.
 *
 * logs: a followed log of --mb MiB (the fake agent's `blast` container, written as fast as the
 * reader takes it) read over HTTPS from the agent with the kubelet client certificate, then
 * through the secure port (the TLS front asks the agent itself once the filter chain and the
 * connect handler answered the hand-off directive) with the admin certificate.
 * port-forward: --mb MiB from the "pod" port to a client speaking WebSocket-tunneled SPDY
 * (what kubectl v1.32 speaks), directly to the agent (the fake accepts the tunneled protocol,
 * a kubelet does not) and through the secure port, where the TLS front unwraps the WebSocket
 * and speaks plain SPDY to the agent (upstream's TunnelingHandler). Each round runs both paths back to back; the
 * medians over the rounds are reported, and each round's ratio (the machine's load changes
 * less within a round than across rounds). Loopback only; every transfer is bounded in bytes
 * and time.
 */
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from '../test/helpers/server.js';
import { startFakeKubelet, type FakeKubelet } from '../test/helpers/fake-kubelet.js';
import { SpdyPortForward } from '../test/helpers/spdy-portforward.js';
import { WsConn } from '../test/helpers/ws-frames.js';
import { percentile } from './lib/stats.js';
import { cpuSeconds, startServer, type ServerChild } from './lib/procs.js';

interface Endpoint {
  port: number;
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const strArg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const MB = arg('mb', 256);
/** `--only logs` or `--only pf`: one stream kind (profiling); default both */
const ONLY = strArg('only');
/** `--cpu-prof DIR`: the server's threads write V8 CPU profiles there (bench/profile-summary.ts) */
const CPU_PROF = strArg('cpu-prof');
const ROUNDS = arg('rounds', 3);
const BYTES = MB * 1024 * 1024;
const LIMIT_MS = 60_000;

/** Reads a followed log of BYTES; resolves with MiB/s. */
function readLog(e: Endpoint, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let n = 0;
    const req = httpsRequest(
      { host: '127.0.0.1', port: e.port, path, cert: e.cert, key: e.key, ca: e.ca, agent: false, timeout: LIMIT_MS },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        res.on('data', (c: Buffer) => {
          n += c.length;
        });
        res.on('end', () =>
          n === BYTES
            ? resolve(MB / ((performance.now() - t0) / 1000))
            : reject(new Error(`read ${n} of ${BYTES} bytes`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** A port-forward client: WebSocket (SPDY/3.1+portforward.k8s.io), error and data streams, counts data. */
function forward(e: Endpoint, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = tlsConnect({
      host: '127.0.0.1',
      port: e.port,
      cert: e.cert,
      key: e.key,
      ca: e.ca,
      servername: 'localhost',
    });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('timed out'));
    }, LIMIT_MS);
    const key = randomBytes(16).toString('base64');
    sock.once('secureConnect', () =>
      sock.write(
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io\r\n\r\n`,
      ),
    );
    let head: Buffer = Buffer.alloc(0);
    let t0 = 0,
      n = 0;
    let buf: Buffer = Buffer.alloc(0);
    const onHead = (c: Buffer) => {
      head = Buffer.concat([head, c]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onHead);
      if (!head.subarray(0, 12).toString().includes('101')) {
        reject(new Error(head.subarray(0, end).toString()));
        sock.destroy();
        return;
      }
      const ws = new WsConn(sock, head.subarray(end + 4), true);
      ws.onMessage = (m) => {
        buf = buf.length ? Buffer.concat([buf, m]) : m;
        while (buf.length >= 8) {
          const len = buf.readUInt32BE(4) & 0xffffff;
          if (buf.length < 8 + len) break;
          const fin = (buf[0]! & 0x80) === 0 && (buf[4]! & 1) === 1 && (buf.readUInt32BE(0) & 0x7fffffff) === 3;
          if ((buf[0]! & 0x80) === 0) n += len;
          buf = buf.subarray(8 + len);
          if (fin) {
            clearTimeout(timer);
            ws.close();
            return n === BYTES
              ? resolve(MB / ((performance.now() - t0) / 1000))
              : reject(new Error(`got ${n} of ${BYTES} bytes`));
          }
        }
      };
      t0 = performance.now();
      for (const id of [1, 3]) ws.send(synStream(id));
    };
    sock.on('data', onHead);
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** SYN_STREAM with a header block the fake agent does not decode (stored deflate, 0 pairs). */
function synStream(id: number): Buffer {
  const block = Buffer.from([...(id === 1 ? [0x78, 0x01] : []), 0, 4, 0, 0xfb, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
  const p = Buffer.alloc(10 + block.length);
  p.writeUInt32BE(id, 0);
  block.copy(p, 10);
  const h = Buffer.from([0x80, 0x03, 0x00, 0x01, 0, 0, 0, 0]);
  h.writeUInt32BE(p.length, 4);
  return Buffer.concat([h, p]);
}

/** The "pod" port: BYTES to every connection, then close. */
async function source(): Promise<Server> {
  const chunk = Buffer.alloc(64 * 1024, 7);
  const srv = createServer((c) => {
    let left = BYTES;
    const pump = () => {
      while (left > 0) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        if (!c.write(part)) {
          c.once('drain', pump);
          return;
        }
      }
      c.end();
    };
    c.on('error', () => {});
    pump();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return srv;
}

/** One transfer: MiB/s, and CPU ms per MiB of this process (client and agent) and of the server. */
interface Sample {
  rate: number;
  ownCpu: number;
  serverCpu: number;
}

async function measured(serverPid: number, transfer: () => Promise<number>): Promise<Sample> {
  const own = process.cpuUsage();
  const server = cpuSeconds(serverPid);
  const rate = await transfer();
  const used = process.cpuUsage(own);
  return {
    rate,
    ownCpu: (used.user + used.system) / 1000 / MB,
    serverCpu: ((cpuSeconds(serverPid) - server) * 1000) / MB,
  };
}

function report(runs: Record<'logsDirect' | 'logsThrough' | 'pfDirect' | 'pfThrough', Sample[]>): string {
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const med = (xs: number[]) => percentile(xs, 50);
  const row = (what: string, d: Sample[], t: Sample[]) => {
    const ratios = t.map((x, i) => x.rate / d[i]!.rate);
    const cpu = `${med(d.map((x) => x.ownCpu)).toFixed(1)} | ${med(t.map((x) => x.ownCpu)).toFixed(1)} + ${med(t.map((x) => x.serverCpu)).toFixed(1)}`;
    return `| ${what} | ${med(d.map((x) => x.rate)).toFixed(0)} | ${med(t.map((x) => x.rate)).toFixed(0)} | ${pct(med(ratios))} | ${ratios.map(pct).join(' ')} | ${cpu} |`;
  };
  return [
    `node agents: ${MB} MiB per transfer, ${ROUNDS} rounds (medians; the ratio is the median of each round's through/direct;`,
    'CPU in ms per MiB: the bench process (client and fake agent) + the server process, all threads)',
    '',
    '| stream | direct MiB/s | through the server MiB/s | ratio | per round | CPU direct | CPU through (bench + server) |',
    '| --- | ---: | ---: | ---: | --- | ---: | ---: |',
    ...(runs.logsDirect.length ? [row('logs -f (HTTPS, chunked)', runs.logsDirect, runs.logsThrough)] : []),
    ...(runs.pfDirect.length
      ? [
          row(
            'port-forward (WebSocket-tunneled SPDY; the server asks the agent for SPDY)',
            runs.pfDirect,
            runs.pfThrough,
          ),
        ]
      : []),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const s: ServerChild = await startServer(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [], [
    '--secure-port',
    '0',
  ]);
  let agent: FakeKubelet | undefined;
  const src = await source();
  try {
    const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f));
    agent = await startFakeKubelet({ cert: pki('apiserver.crt'), key: pki('apiserver.key'), ca: pki('ca.crt') });
    const srcPort = (src.address() as { port: number }).port;
    // the direct reads speak the tunneled protocol to the agent itself; the server asks it for SPDY
    agent.tunneledPortForward = true;
    agent.portForward = (ws) => {
      const pf = new SpdyPortForward((b) => ws.send(b), srcPort, ws.sock);
      ws.onMessage = (m) => pf.feed(m);
      ws.onClose = () => pf.close();
    };
    const kubeconfig = readFileSync(join(s.dataDir, 'admin.kubeconfig'), 'utf8');
    const securePort = Number(/server: https:\/\/[^:]+:(\d+)/.exec(kubeconfig)![1]);
    await request(s.url, 'POST', '/api/v1/nodes', {
      metadata: { name: 'n1' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: agent.port } },
      },
    });
    await request(s.url, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p1' },
      spec: { nodeName: 'n1', containers: [{ name: 'blast', image: 'x' }] },
    });
    const direct: Endpoint = {
      port: agent.port,
      cert: pki('kubelet-client.crt'),
      key: pki('kubelet-client.key'),
      ca: pki('ca.crt'),
    };
    const through: Endpoint = { port: securePort, cert: pki('admin.crt'), key: pki('admin.key'), ca: pki('ca.crt') };
    const runs = {
      logsDirect: [] as Sample[],
      logsThrough: [] as Sample[],
      pfDirect: [] as Sample[],
      pfThrough: [] as Sample[],
    };
    const pid = s.pid;
    for (let round = 0; round < ROUNDS; round++) {
      if (ONLY !== 'pf') {
        runs.logsDirect.push(
          await measured(pid, () => readLog(direct, `/containerLogs/default/p1/blast?follow=true&limitBytes=${BYTES}`)),
        );
        runs.logsThrough.push(
          await measured(pid, () =>
            readLog(through, `/api/v1/namespaces/default/pods/p1/log?follow=true&limitBytes=${BYTES}`),
          ),
        );
      }
      if (ONLY !== 'logs') {
        runs.pfDirect.push(await measured(pid, () => forward(direct, '/portForward/default/p1')));
        runs.pfThrough.push(
          await measured(pid, () => forward(through, '/api/v1/namespaces/default/pods/p1/portforward')),
        );
      }
    }
    process.stdout.write(report(runs));
  } finally {
    await agent?.close();
    src.close();
    await s.stop();
    s.cleanup();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
