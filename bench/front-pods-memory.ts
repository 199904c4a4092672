/**
 * The front thread's heap per stored Pod, without sockets: starts the server in this process and
 * drives N Pod creates (the density scenario's Pod) through the real handler chain with stand-in
 * uWS objects, as bench/front-create.ts drives ConfigMaps; the shard actors, LMDB and the change
 * events run for real. Prints the front (main) thread's V8 heap after the creates as the server
 * would hold it (live objects and uncollected garbage), then after full collections (live only),
 * per Pod, and the process RSS. The front keeps every Pod's existence, apiVersion and quota
 * summary, and the JSON of the most recently written only (src/actors/read-cache.ts).
 *
 *   node --expose-gc [--import ./dist/src/server/young-generation.js] dist/bench/front-pods-memory.js [--pods 30000] [--concurrency 64]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { parseArgs } from '../src/server/options.js';
import { ApiServer } from '../src/server/server.js';
import { buildHandlerChain } from '../src/server/handler-chain.js';

const MAX_PODS = 1_000_000;
const NS = 'bench-pods';
const PATH = `/api/v1/namespaces/${NS}/pods`;

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1 || v > MAX_PODS) throw new Error(`${name} must be an integer in 1..${MAX_PODS}`);
  return v;
}

/** One POST of a density Pod as uWS hands it over (the body in one later onData chunk). */
function fakes(name: string, answered: (status: string) => void) {
  const body = Buffer.from(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { bench: 'density' } },
      spec: { containers: [{ name: 'c', image: 'registry.example/pause:3.10' }] },
    }),
  );
  let status = '';
  const res = {
    onAborted: () => res,
    onData(fn: (ab: ArrayBuffer, isLast: boolean) => void) {
      const ab = new ArrayBuffer(body.length);
      body.copy(Buffer.from(ab));
      setImmediate(() => fn(ab, true));
      return res;
    },
    onWritable: () => res,
    cork(fn: () => void) {
      fn();
      return res;
    },
    writeStatus(s: string) {
      status = s;
      return res;
    },
    writeHeader: () => res,
    end() {
      answered(status);
      return res;
    },
    endWithoutBody() {
      answered(status);
      return res;
    },
    getRemoteAddressAsText: () => Buffer.from('127.0.0.1'),
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'user-agent': 'bench',
  };
  const req = {
    getCaseSensitiveMethod: () => 'POST',
    getMethod: () => 'post',
    getUrl: () => PATH,
    getQuery: () => undefined,
    getHeader: (k: string | Uint8Array) => headers[Buffer.from(k).toString()] ?? '',
    forEach: () => undefined,
  };
  return { res: res as unknown as HttpResponse, req: req as unknown as HttpRequest };
}

/** Runs `total` creates, `concurrency` in flight; resolves when all are answered (201 each). */
function drive(plain: (res: HttpResponse, req: HttpRequest) => void, total: number, concurrency: number) {
  return new Promise<void>((resolve, reject) => {
    let sent = 0;
    let done = 0;
    const next = (): void => {
      const { res, req } = fakes(`p-${sent++}`, (status) => {
        if (!status.startsWith('201')) return reject(new Error(`create answered ${status}`));
        if (++done === total) resolve();
        else if (sent < total) next();
      });
      plain(res, req);
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}

const MiB = 2 ** 20;
const heap = () => getHeapStatistics().used_heap_size;
const total = () => getHeapStatistics().total_heap_size;

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const pods = flag('--pods', 30_000);
  const concurrency = flag('--concurrency', 64);
  const dataDir = mkdtempSync(join(tmpdir(), 'front-pods-memory-'));
  const server = new ApiServer(parseArgs(['--port', '0', '--secure-port', 'off', '--data-dir', dataDir]));
  try {
    const base = `http://127.0.0.1:${await server.start()}`;
    const ns = await fetch(`${base}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
    });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status}`);
    // Pods need the namespace's default service account (its controller creates it)
    for (let i = 0; i < 500; i++) {
      if ((await fetch(`${base}/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const chain = buildHandlerChain(server);
    for (let i = 0; i < 3; i++) gc();
    const h0 = heap();
    const rss0 = process.memoryUsage.rss();
    await drive(chain.plain, pods, concurrency);
    const h1 = heap();
    const t1 = total();
    const rss1 = process.memoryUsage.rss();
    for (let i = 0; i < 3; i++) gc();
    const h2 = heap();
    const per = (b: number) => `${(b / pods).toFixed(0)} B/Pod`;
    process.stdout.write(
      `${pods} Pods created; front thread heap used: before ${(h0 / MiB).toFixed(1)} MiB, ` +
        `after the creates ${(h1 / MiB).toFixed(1)} MiB (+${per(h1 - h0)}; heap total ${(t1 / MiB).toFixed(1)} MiB), ` +
        `after full GCs ${(h2 / MiB).toFixed(1)} MiB (+${per(h2 - h0)} live); process RSS +${per(rss1 - rss0)}\n`,
    );
  } finally {
    await server.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`front-pods-memory: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
