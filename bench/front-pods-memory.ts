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
import { inProcessServer, runMain } from './lib/in-process.js';
import { getHeapStatistics } from 'node:v8';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { buildHandlerChain } from '../src/server/handler-chain.js';
import { drivePosts, fakePost, intFlag } from './lib/fake-post.js';

const MAX_PODS = 1_000_000;
const NS = 'bench-pods';
const PATH = `/api/v1/namespaces/${NS}/pods`;

const flag = (name: string, fallback: number): number => intFlag(name, fallback, MAX_PODS);

/** One POST of a density Pod as uWS hands it over (the body in one later onData chunk). */
const fakes = (name: string, answered: (status: string) => void) =>
  fakePost(
    PATH,
    Buffer.from(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { bench: 'density' } },
        spec: { containers: [{ name: 'c', image: 'registry.example/pause:3.10' }] },
      }),
    ),
    'bench',
    answered,
  );

const drive = (plain: (res: HttpResponse, req: HttpRequest) => void, total: number, concurrency: number) =>
  drivePosts(plain, fakes, 'p', total, concurrency);

const MiB = 2 ** 20;
const heap = () => getHeapStatistics().used_heap_size;
const total = () => getHeapStatistics().total_heap_size;

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const pods = flag('--pods', 30_000);
  const concurrency = flag('--concurrency', 64);
  await inProcessServer('front-pods-memory', NS, [], async ({ server, base }) => {
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
  });
}

runMain('front-pods-memory', main);
