/**
 * Durable CREATE with many concurrent clients: wrk POSTs ~1 KB ConfigMaps with unique names
 * (bench/template-create.lua) and counts every non-201 as an error. Ceilings: raw LMDB batched puts in
 * this process (awaiting the commit, as the server does, and awaiting the disk flush too), and
 * the hello-world server answering the same POSTs with a 201 body of the created object's size.
 */
import { fileURLToPath } from 'node:url';
import { startHello, startServer, type Child } from '../lib/procs.js';
import { ensureNamespace, expect } from '../lib/http.js';
import { lmdbBatchedPuts, type LmdbCeilingResult } from '../lib/lmdb-ceiling.js';
import type { Row, ScenarioResult } from '../lib/report.js';
import { bestOf, runTag, warmAndMeasure, type Ctx, type Measured } from './common.js';

const SCRIPT = fileURLToPath(new URL('../../../bench/template-create.lua', import.meta.url));
const OBJECT_BYTES = 1024;
const NS = 'bench-create';
const PATH = `/api/v1/namespaces/${NS}/configmaps`;
const LMDB_MAX_PUTS = 5_000_000;

/** The body template-create.lua sends (prefix, unique name, suffix); the pad makes it OBJECT_BYTES long. */
const PREFIX = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"';
const suffixFor = (pad: string) => `","labels":{"bench":"create"}},"data":{"pad":"${pad}"}}`;
function luaBody(name: string, pad: string): string {
  return PREFIX + name + suffixFor(pad);
}

function okPerSec(r: Measured): number {
  return r.requests ? (r.reqPerSec * (r.requests - r.errors)) / r.requests : 0;
}

async function logged(ctx: Ctx, what: string, p: Promise<LmdbCeilingResult>): Promise<LmdbCeilingResult> {
  const r = await p;
  ctx.log(`  raw LMDB, ${what}: ${r.putsPerSec.toFixed(0)} puts/s (batch p99 ${r.batchP99Ms.toFixed(2)} ms)`);
  return r;
}

export async function createScenario(ctx: Ctx): Promise<ScenarioResult> {
  const tag = runTag('c');
  const padBytes = OBJECT_BYTES - luaBody(`${tag}m-1-100000`, '').length;
  const bodySuffix = suffixFor('x'.repeat(padBytes));
  const scriptArgs = (suffix: string, status: number) => [`${tag}${suffix}`, String(status), PREFIX, bodySuffix];
  const run = (url: string, suffix: string, status: number) => ({
    url,
    threads: 1,
    connections: ctx.connections,
    durationSec: ctx.durationSec,
    script: SCRIPT,
    scriptArgs: scriptArgs(suffix, status),
  });

  let responseBytes = 0;
  const lmdb = (flushed: boolean, durationSec = ctx.durationSec): Promise<LmdbCeilingResult> =>
    lmdbBatchedPuts({
      durationSec,
      batch: ctx.connections,
      valueBytes: responseBytes,
      maxPuts: LMDB_MAX_PUTS,
      flushed,
    });
  const server = await startServer(ctx.serverNodeArgs, ctx.serverArgs);
  let hello: Child | undefined;
  let best: { server: Measured; hello: Measured; committed: LmdbCeilingResult; flushed: LmdbCeilingResult };
  try {
    await ensureNamespace(server.url, NS);
    responseBytes = Buffer.byteLength(
      (await expect(server.url, 'POST', PATH, luaBody(`${tag}-probe`, 'x'.repeat(padBytes)), [201])).text,
    );
    const h = await startHello(responseBytes, { status: 201 });
    hello = h;
    await lmdb(false, 1);
    best = (await bestOf<'server' | 'hello' | 'committed' | 'flushed', Measured | LmdbCeilingResult>(
      ctx.rounds,
      {
        server: (round) =>
          warmAndMeasure(ctx, server.pid, run(server.url + PATH, `m${round}`, 201), scriptArgs(`w${round}`, 201)),
        hello: (round) => warmAndMeasure(ctx, h.pid, run(h.url + PATH, `m${round}`, 201), scriptArgs(`w${round}`, 201)),
        committed: () => logged(ctx, 'await commit', lmdb(false)),
        flushed: () => logged(ctx, 'await commit + flush', lmdb(true)),
      },
      (r) => ('putsPerSec' in r ? r.putsPerSec : okPerSec(r)),
    )) as typeof best;
  } finally {
    await hello?.stop();
    await server.stop();
    server.cleanup();
  }
  const { server: measured, hello: helloPost, committed, flushed } = best;
  const ok = okPerSec(measured);
  const lmdbRow = (subject: string, r: LmdbCeilingResult): Row => ({
    scenario: 'create',
    subject,
    throughput: r.putsPerSec,
    unit: 'puts/s',
    p50Ms: r.batchP50Ms,
    p99Ms: r.batchP99Ms,
  });
  return {
    name: 'create',
    rows: [
      {
        scenario: 'create',
        subject: 'apiserver (201s only)',
        throughput: ok,
        unit: 'creates/s',
        p50Ms: measured.p50Ms,
        p99Ms: measured.p99Ms,
        ratio: ok / committed.putsPerSec,
        cpuUs: measured.cpuUsPerRequest,
        mainCpuUs: measured.mainCpuUsPerRequest,
        errors: measured.errors,
      },
      lmdbRow(`raw LMDB ceiling, batches of ${ctx.connections}, await commit`, committed),
      lmdbRow(`raw LMDB, batches of ${ctx.connections}, await commit + flush`, flushed),
      {
        scenario: 'create',
        subject: `hello-world POST ceiling (${responseBytes} B 201 body)`,
        throughput: helloPost.reqPerSec,
        unit: 'req/s',
        p50Ms: helloPost.p50Ms,
        p99Ms: helloPost.p99Ms,
        cpuUs: helloPost.cpuUsPerRequest,
        mainCpuUs: helloPost.mainCpuUsPerRequest,
        errors: helloPost.errors,
      },
    ],
    verdicts: [
      {
        target: `durable CREATE ≥ 12,000/s and ≥ 30% of raw LMDB batched puts with ${ctx.connections} concurrent clients (issue 24)`,
        measured: `${ok.toFixed(0)} creates/s, ${measured.errors} non-201 (${((100 * ok) / committed.putsPerSec).toFixed(1)}% of raw LMDB await-commit, ${((100 * ok) / helloPost.reqPerSec).toFixed(1)}% of hello-world POST)`,
        met: ok >= 12000 && ok >= 0.3 * committed.putsPerSec && measured.errors === 0,
      },
    ],
    commands: [
      `# create: apiserver, hello-world POST (${responseBytes} B, 201) and raw LMDB, alternating, best of ${ctx.rounds}; request bodies ${OBJECT_BYTES} B`,
      measured.command,
      helloPost.command,
      `# raw LMDB: in-process (bench/lib/lmdb-ceiling.ts), ${ctx.durationSec}s each, batches of ${ctx.connections} × ${responseBytes} B`,
    ],
    notes: [
      'the LMDB ceiling row\'s latency columns are per batch commit; "vs ceiling" of the apiserver row is against "await commit", which is what the server awaits',
      `apiserver at ${((100 * ok) / flushed.putsPerSec).toFixed(1)}% of LMDB await-commit-and-flush, ${((100 * ok) / helloPost.reqPerSec).toFixed(1)}% of hello-world POST`,
    ],
  };
}
