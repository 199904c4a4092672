/**
 * CPU per durable create, without sockets: starts the server in this process and drives the
 * real handler chain (buildHandlerChain, the plain port's entry) with stand-in uWS request and
 * response objects, keeping `--concurrency` creates in flight like wrk's connections (the create
 * scenario's ~1 KB ConfigMap body). The creates run for real: shard actors, LMDB commits and
 * fsyncs, events. Prints the CPU per create of the front (main) thread and of the whole process.
 * What it leaves out is uWS, the kernel's sockets and the client, so the front thread's figure
 * is the pipeline's own cost, steadier on a busy machine than a wrk run's.
 *
 *   node [--import ./dist/src/server/young-generation.js] dist/bench/front-create.js [--creates 20000] [--rounds 3] [--concurrency 64] [-- server flags]
 *
 * With the --import, the front thread's young generation is capped as the server's is (src/main.ts
 * imports that module first); without it V8 grows it as it chooses. Each round prints the size.
 */
import { inProcessServer, runMain } from './lib/in-process.js';
import { getHeapSpaceStatistics } from 'node:v8';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { buildHandlerChain } from '../src/server/handler-chain.js';
import { cpuSeconds } from './lib/procs.js';
import { drivePosts, fakePost, intFlag } from './lib/fake-post.js';

const MAX_CREATES = 1_000_000;

const flag = (name: string, fallback: number): number => intFlag(name, fallback, MAX_CREATES);

const PAD = 'x'.repeat(880);
const PATH = '/api/v1/namespaces/bench-create/configmaps';
const _CONTENT_TYPE = 'application/json';

/** One create's POST: the create scenario's ConfigMap, as wrk sends it. */
const fakes = (name: string, answered: (status: string) => void) =>
  fakePost(
    PATH,
    Buffer.from(
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","labels":{"bench":"create"}},"data":{"pad":"${PAD}"}}`,
    ),
    'wrk',
    answered,
  );

const drive = (plain: (res: HttpResponse, req: HttpRequest) => void, tag: string, total: number, concurrency: number) =>
  drivePosts(plain, fakes, tag, total, concurrency);

async function main(): Promise<void> {
  const creates = flag('--creates', 20_000);
  const rounds = flag('--rounds', 3);
  const concurrency = flag('--concurrency', 64);
  // arguments after `--` go to the server (e.g. `-- --actor-pipeline-depth 1`)
  const dash = process.argv.indexOf('--');
  const extra = dash >= 0 ? process.argv.slice(dash + 1) : [];
  await inProcessServer('front-create', 'bench-create', extra, async ({ server }) => {
    const chain = buildHandlerChain(server);
    await drive(chain.plain, 'warm', Math.min(creates, 5_000), concurrency);
    const lines: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const main0 = cpuSeconds(process.pid, true);
      const all0 = cpuSeconds(process.pid);
      const t0 = performance.now();
      await drive(chain.plain, `r${i}`, creates, concurrency);
      const s = (performance.now() - t0) / 1000;
      const main = ((cpuSeconds(process.pid, true) - main0) * 1e6) / creates;
      const all = ((cpuSeconds(process.pid) - all0) * 1e6) / creates;
      const young = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0;
      lines.push(
        `${(creates / s).toFixed(0)}/s, ${all.toFixed(1)} µs CPU per create (front thread ${main.toFixed(1)}), front new space ${(young / 2 ** 20).toFixed(0)} MB`,
      );
    }
    process.stdout.write(
      `front-create, ${creates} creates per round, ${concurrency} in flight:\n  ${lines.join('\n  ')}\n`,
    );
  });
}

runMain('front-create', main);
