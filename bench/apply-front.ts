/**
 * CPU per server-side apply without sockets, by thread: starts the server in this process and
 * drives the real handler chain (the plain port's entry) with stand-in uWS request and response
 * objects, as front-create does for creates, with the apply scenario's load (bench/scenarios/
 * apply.ts): `--concurrency` clients, each on its own 3-container Deployment, alternating the
 * deployer's apply and the autoscaler's (replicas only, force). The applies run for real (shard
 * actors, LMDB commits and fsyncs, events). Prints the CPU per apply of the front (main) thread
 * and of the whole process; what it leaves out is uWS, the kernel's sockets and the client.
 *
 *   node [--import ./dist/src/server/young-generation.js] dist/bench/apply-front.js [--applies 20000] [--rounds 3] [--concurrency 64]
 */
import { inProcessServer, runMain } from './lib/in-process.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { buildHandlerChain } from '../src/server/handler-chain.js';
import { cpuSeconds } from './lib/procs.js';
import { fakeRequest, intFlag } from './lib/fake-post.js';
import { deployerBody, scalerBody } from './scenarios/apply.js';

const MAX_APPLIES = 1_000_000;
const NS = 'bench-apply';
const PATH = `/apis/apps/v1/namespaces/${NS}/deployments`;
const CONTENT_TYPE = 'application/apply-patch+yaml';
/**
 * Each client's bodies are made once, for rounds 0..CYCLE-1, and reused round k mod CYCLE (even,
 * so a round keeps its manager): every apply still changes the object (round k against k-2), and
 * the driver's own JSON.stringify stays off the front thread's measured CPU.
 */
const CYCLE = 64;

const flag = (name: string, fallback: number): number => intFlag(name, fallback, MAX_APPLIES);

/** One apply's PATCH as uWS hands it over. */
function fakePatch(
  url: string,
  query: string,
  body: Buffer,
  answered: (status: string) => void,
): { res: HttpResponse; req: HttpRequest } {
  const headers = { 'content-type': CONTENT_TYPE, accept: 'application/json', 'user-agent': 'apply-front' };
  return fakeRequest({ method: 'PATCH', path: url, query, headers, body }, answered);
}

/** `total` applies over `names.length` clients, each alternating the two managers from its round. */
function drive(
  plain: (res: HttpResponse, req: HttpRequest) => void,
  names: string[],
  bodies: Buffer[][],
  rounds: number[],
  total: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sent = 0;
    let done = 0;
    const next = (i: number): void => {
      sent++;
      const name = names[i]!;
      const k = rounds[i]!++;
      const scaler = k % 2 === 1;
      const body = bodies[i]![k % CYCLE]!;
      const query = scaler ? 'fieldManager=autoscaler&force=true' : 'fieldManager=deployer';
      const { res, req } = fakePatch(`${PATH}/${name}`, query, body, (status) => {
        if (!status.startsWith('200')) return reject(new Error(`apply answered ${status}`));
        if (++done === total) resolve();
        // the next request in a turn of its own, as uWS hands requests over (not inside this reply's call)
        else if (sent < total) setImmediate(next, i);
      });
      plain(res, req);
    };
    for (let i = 0; i < Math.min(names.length, total); i++) next(i);
  });
}

async function main(): Promise<void> {
  const applies = flag('--applies', 20_000);
  const rounds = flag('--rounds', 3);
  const concurrency = flag('--concurrency', 64);
  await inProcessServer('apply-front', NS, [], async ({ server, base }) => {
    const names = Array.from({ length: concurrency }, (_, i) => `d-${i}`);
    const k = names.map(() => 0);
    for (const [i, name] of names.entries()) {
      const r = await fetch(`${base}${PATH}/${name}?fieldManager=deployer`, {
        method: 'PATCH',
        headers: { 'content-type': CONTENT_TYPE },
        body: deployerBody(name, k[i]!++),
      });
      if (r.status !== 201) throw new Error(`apply-create: ${r.status}`);
    }
    const bodies = names.map((name) =>
      Array.from({ length: CYCLE }, (_, r) => Buffer.from(r % 2 === 1 ? scalerBody(name, r) : deployerBody(name, r))),
    );
    const chain = buildHandlerChain(server);
    await drive(chain.plain, names, bodies, k, Math.min(applies, 5_000));
    const lines: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const main0 = cpuSeconds(process.pid, true);
      const all0 = cpuSeconds(process.pid);
      const t0 = performance.now();
      await drive(chain.plain, names, bodies, k, applies);
      const s = (performance.now() - t0) / 1000;
      const main = ((cpuSeconds(process.pid, true) - main0) * 1e6) / applies;
      const all = ((cpuSeconds(process.pid) - all0) * 1e6) / applies;
      lines.push(`${(applies / s).toFixed(0)}/s, ${all.toFixed(1)} µs CPU per apply (front thread ${main.toFixed(1)})`);
    }
    process.stdout.write(
      `apply-front, ${applies} applies per round, ${concurrency} clients:\n  ${lines.join('\n  ')}\n`,
    );
  });
}

runMain('apply-front', main);
