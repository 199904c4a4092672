/**
 * Peak resident memory while listing a large collection (issue 12 item 4):
 * `node dist/bench/large-list.js [--count 100000] [--value-bytes 200]`. Creates the ConfigMaps
 * (bounded concurrency), then lists them three ways, sampling the server's RSS every 20 ms:
 * the whole collection (streamed in pages), the whole collection with gzip (one gzip stream),
 * and `?limit=<count+1>` (the client asks for one page: the whole list as one body, as before
 * streaming). Figures are the RSS growth over the RSS before each list.
 *
 * `--flatness [--sizes 500,5000,50000] [--seconds 3] [--cpu-prof DIR]` (issue 24 item 2): one server, the
 * namespace grown to each size in turn; at each size, after a settle and two warm-up lists,
 * sequential LISTs of the namespace alternately as JSON and as Protobuf for `--seconds` each
 * (at most MAX_LISTS), and the server's CPU per listed item (all threads, and the front thread)
 * from /proc: flat figures across sizes mean a list costs the same per item whatever its length.
 */
import http from 'node:http';
import { cpuSeconds, rssBytes, sleep, startServer } from './lib/procs.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const COUNT = arg('count', 100_000);
const PROTOBUF = 'application/vnd.kubernetes.protobuf, application/vnd.platform.protobuf';
/** bound per size and encoding of the flatness mode */
const MAX_LISTS = 200;
const VALUE = arg('value-bytes', 200);
const CMS = '/api/v1/namespaces/default/configmaps';

function post(port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: CMS,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

async function listPeak(
  pid: number,
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ bytes: number; ms: number; peak: number; base: number }> {
  const base = rssBytes(pid);
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 20);
  const started = Date.now();
  const bytes = await new Promise<number>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
        });
        res.on('end', () => resolve(n));
      })
      .on('error', reject);
  });
  const ms = Date.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, rssBytes(pid));
  return { bytes, ms, peak, base };
}

/** Creates cm-<from>..cm-<to - 1> in batches of 500 concurrent POSTs. */
async function fillTo(port: number, from: number, to: number): Promise<void> {
  const value = 'x'.repeat(VALUE);
  for (let i = from; i < to; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(to, i + 500); j++)
      batch.push(post(port, `{"metadata":{"name":"cm-${j}"},"data":{"k":"${value}"}}`));
    const codes = await Promise.all(batch);
    if (codes.some((c) => c !== 201)) throw new Error(`create failed: ${codes.find((c) => c !== 201)}`);
  }
}

/** One LIST, the body counted and dropped: status, bytes, ms. */
function list(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode!, bytes: n, ms: performance.now() - t0 }));
      })
      .on('error', reject);
  });
}

/** Waits (≤ 30 s) until the server uses under 5 % of a CPU, so a fill's tail is not measured. */
async function settle(pid: number): Promise<void> {
  const t0 = performance.now();
  let last = cpuSeconds(pid);
  while (performance.now() - t0 < 30_000) {
    await sleep(500);
    const now = cpuSeconds(pid);
    if (now - last < 0.03) return;
    last = now;
  }
}

async function flatness(): Promise<void> {
  const i = process.argv.indexOf('--sizes');
  const sizes = (i > 0 ? process.argv[i + 1]! : '500,5000,50000').split(',').map(Number);
  const seconds = arg('seconds', 3);
  const p = process.argv.indexOf('--cpu-prof');
  const nodeArgs = [
    '--max-old-space-size=4096',
    ...(p > 0 ? ['--cpu-prof', `--cpu-prof-dir=${process.argv[p + 1]}`] : []),
  ];
  const server = await startServer(nodeArgs, [
    '--max-requests-inflight',
    '2000',
    '--max-mutating-requests-inflight',
    '1000',
  ]);
  const out = (l: string) => process.stdout.write(l + '\n');
  try {
    out(
      '| items | encoding | lists | bytes/list | p50 ms | µs CPU/item (front) | RSS MiB |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    );
    let have = 0;
    for (const n of sizes) {
      await fillTo(server.port, have, n);
      have = n;
      const runs: [string, Record<string, string>][] = [
        ['JSON', {}],
        ['Protobuf', { accept: PROTOBUF }],
      ];
      for (const [, h] of runs) for (let w = 0; w < 2; w++) await list(server.port, CMS, h);
      await settle(server.pid);
      for (const [name, headers] of runs) {
        const cpu0 = cpuSeconds(server.pid),
          front0 = cpuSeconds(server.pid, true);
        const t0 = performance.now();
        const ms: number[] = [];
        let bytes = 0;
        while (ms.length < MAX_LISTS && (performance.now() - t0 < seconds * 1000 || ms.length < 3)) {
          const r = await list(server.port, CMS, headers);
          if (r.status !== 200) throw new Error(`list: ${r.status}`);
          ms.push(r.ms);
          bytes = r.bytes;
        }
        const items = ms.length * n;
        const us = (d: number) => ((d * 1e6) / items).toFixed(2);
        ms.sort((a, b) => a - b);
        out(
          `| ${n.toLocaleString('en-US')} | ${name} | ${ms.length} | ${bytes.toLocaleString('en-US')} | ${ms[ms.length >> 1]!.toFixed(1)} | ${us(cpuSeconds(server.pid) - cpu0)} (${us(cpuSeconds(server.pid, true) - front0)}) | ${(rssBytes(server.pid) / 2 ** 20).toFixed(0)} |`,
        );
      }
    }
  } finally {
    agent.destroy();
    await server.stop();
    server.cleanup();
  }
}

async function main(): Promise<void> {
  const server = await startServer(
    ['--max-old-space-size=4096'],
    ['--max-requests-inflight', '2000', '--max-mutating-requests-inflight', '1000'],
  );
  try {
    const started = Date.now();
    await fillTo(server.port, 0, COUNT);
    const createMs = Date.now() - started;
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    process.stdout.write(
      `created ${COUNT} ConfigMaps (${VALUE}-byte values) in ${(createMs / 1000).toFixed(1)} s; server RSS ${mb(rssBytes(server.pid))} MiB\n`,
    );
    const runs: [string, string, Record<string, string>][] = [
      ['streamed (pages of 1000)', CMS, {}],
      ['streamed, gzip', CMS, { 'accept-encoding': 'gzip' }],
      ['one body (?limit=count+1)', `${CMS}?limit=${COUNT + 1}`, {}],
    ];
    process.stdout.write(
      '| list | response | time | RSS before | peak RSS | growth |\n|---|---:|---:|---:|---:|---:|\n',
    );
    for (const [name, path, headers] of runs) {
      const r = await listPeak(server.pid, server.port, path, headers);
      process.stdout.write(
        `| ${name} | ${mb(r.bytes)} MiB | ${(r.ms / 1000).toFixed(2)} s | ${mb(r.base)} MiB | ${mb(r.peak)} MiB | +${mb(r.peak - r.base)} MiB |\n`,
      );
    }
  } finally {
    agent.destroy();
    await server.stop();
    server.cleanup();
  }
}

await (process.argv.includes('--flatness') ? flatness() : main());
