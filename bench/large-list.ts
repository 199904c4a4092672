/**
 * Peak resident memory while listing a large collection (issue 12 item 4):
 * `node dist/bench/large-list.js [--count 100000] [--value-bytes 200]`. Creates the ConfigMaps
 * (bounded concurrency), then lists them three ways, sampling the server's RSS every 20 ms:
 * the whole collection (streamed in pages), the whole collection with gzip (one gzip stream),
 * and `?limit=<count+1>` (the client asks for one page: the whole list as one body, as before
 * streaming). Figures are the RSS growth over the RSS before each list.
 */
import http from 'node:http';
import { rssBytes, startServer } from './lib/procs.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const COUNT = arg('count', 100_000);
const VALUE = arg('value-bytes', 200);
const CMS = '/api/v1/namespaces/default/configmaps';

function post(port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: CMS, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

async function listPeak(pid: number, port: number, path: string, headers: Record<string, string> = {}): Promise<{ bytes: number; ms: number; peak: number; base: number }> {
  const base = rssBytes(pid);
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, rssBytes(pid)); }, 20);
  const started = Date.now();
  const bytes = await new Promise<number>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => { n += c.length; });
      res.on('end', () => resolve(n));
    }).on('error', reject);
  });
  const ms = Date.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, rssBytes(pid));
  return { bytes, ms, peak, base };
}

async function main(): Promise<void> {
  const server = await startServer(['--max-old-space-size=4096'], ['--max-requests-inflight', '2000', '--max-mutating-requests-inflight', '1000']);
  try {
    const value = 'x'.repeat(VALUE);
    const started = Date.now();
    for (let i = 0; i < COUNT; i += 500) {
      const batch = [];
      for (let j = i; j < Math.min(COUNT, i + 500); j++) batch.push(post(server.port, `{"metadata":{"name":"cm-${j}"},"data":{"k":"${value}"}}`));
      const codes = await Promise.all(batch);
      if (codes.some((c) => c !== 201)) throw new Error(`create failed: ${codes.find((c) => c !== 201)}`);
    }
    const createMs = Date.now() - started;
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    process.stdout.write(`created ${COUNT} ConfigMaps (${VALUE}-byte values) in ${(createMs / 1000).toFixed(1)} s; server RSS ${mb(rssBytes(server.pid))} MiB\n`);
    const runs: [string, string, Record<string, string>][] = [
      ['streamed (pages of 1000)', CMS, {}],
      ['streamed, gzip', CMS, { 'accept-encoding': 'gzip' }],
      ['one body (?limit=count+1)', `${CMS}?limit=${COUNT + 1}`, {}],
    ];
    process.stdout.write('| list | response | time | RSS before | peak RSS | growth |\n|---|---:|---:|---:|---:|---:|\n');
    for (const [name, path, headers] of runs) {
      const r = await listPeak(server.pid, server.port, path, headers);
      process.stdout.write(`| ${name} | ${mb(r.bytes)} MiB | ${(r.ms / 1000).toFixed(2)} s | ${mb(r.base)} MiB | ${mb(r.peak)} MiB | +${mb(r.peak - r.base)} MiB |\n`);
    }
  } finally {
    agent.destroy();
    await server.stop();
    server.cleanup();
  }
}

await main();
