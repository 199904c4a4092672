/**
 * The front thread's own CPU per cached GET, without sockets: starts the server in this
 * process, creates one ConfigMap, then drives the real handler chain (buildHandlerChain, the
 * plain port's entry) with stand-in uWS request/response objects, N requests per round. What
 * it leaves out is exactly uWS and the kernel (shared with the hello ceiling), so it shows what
 * the pipeline itself costs: request info, APF, negotiation, metrics, the read cache, the reply.
 *
 *   node dist/bench/front-get.js [--requests 100000] [--rounds 5]
 */
import { inProcessServer, postJson, runMain } from './lib/in-process.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { buildHandlerChain } from '../src/server/handler-chain.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

/** Stand-ins for uWS objects: a GET without query or headers, like wrk's; the reply is counted. */
function fakes(path: string) {
  const seen = { status: '', bytes: 0, ended: 0 };
  const res = {
    onAborted: () => res,
    onData: () => res,
    onWritable: () => res,
    cork(fn: () => void) {
      fn();
      return res;
    },
    writeStatus(s: string) {
      seen.status = s;
      return res;
    },
    writeHeader: () => res,
    end(b: string | Uint8Array) {
      seen.bytes = typeof b === 'string' ? Buffer.byteLength(b) : b.byteLength;
      seen.ended++;
      return res;
    },
    endWithoutBody() {
      seen.ended++;
      return res;
    },
    getRemoteAddressAsText: () => Buffer.from('127.0.0.1'),
  };
  const req = {
    getCaseSensitiveMethod: () => 'GET',
    getMethod: () => 'get',
    getUrl: () => `${path}`,
    getQuery: () => undefined,
    getHeader: () => '',
    forEach: () => undefined,
  };
  return { res: res as unknown as HttpResponse, req: req as unknown as HttpRequest, seen };
}

async function main(): Promise<void> {
  const requests = flag('--requests', 100_000);
  const rounds = flag('--rounds', 5);
  await inProcessServer('front-get', 'bench-get', [], async ({ server, base }) => {
    const data = { pad: 'x'.repeat(800) };
    await postJson(base, '/api/v1/namespaces/bench-get/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'one' },
      data,
    });
    const chain = buildHandlerChain(server);
    const { res, req, seen } = fakes('/api/v1/namespaces/bench-get/configmaps/one');
    const run = (n: number) => {
      for (let i = 0; i < n; i++) chain.plain(res, req);
    };
    run(20_000);
    if (!seen.status.startsWith('200') || seen.ended !== 20_000) throw new Error(`warm-up answered ${seen.status}`);
    const perRequest: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const before = process.cpuUsage();
      run(requests);
      // anything the requests deferred (timers, immediates) counts too
      await new Promise((r) => setImmediate(r));
      const used = process.cpuUsage(before);
      perRequest.push((used.user + used.system) / requests);
    }
    perRequest.sort((a, b) => a - b);
    process.stdout.write(
      `front thread, cached GET (${seen.bytes} B body): ${perRequest.map((v) => v.toFixed(2)).join(' ')} µs CPU per request (${rounds} rounds of ${requests}, sorted; median ${perRequest[Math.floor(rounds / 2)]!.toFixed(2)})\n`,
    );
  });
}

runMain('front-get', main);
