/**
 * Read scenarios: GET of one ~1 KB ConfigMap and LIST of 500 ConfigMaps in one namespace,
 * each against the real server and then the hello-world ceiling serving a body of the same
 * byte size, with the same wrk settings.
 */
import { startHello, startServer, type Child } from '../lib/procs.js';
import { configMapJson, ensureNamespace, expect, parallel, servedOverhead } from '../lib/http.js';
import type { Row, ScenarioResult } from '../lib/report.js';
import { bestOf, warmAndMeasure, type Ctx, type Measured } from './common.js';

/** size of each ConfigMap as the server serves it */
const OBJECT_BYTES = 1024;
const LIST_ITEMS = 500;
const LIST_MAX_CONNECTIONS = 16;

function rows(scenario: string, server: Measured, ceiling: Measured, bodyBytes: number): Row[] {
  return [
    {
      scenario,
      subject: 'apiserver',
      throughput: server.reqPerSec,
      unit: 'req/s',
      p50Ms: server.p50Ms,
      p99Ms: server.p99Ms,
      ratio: server.reqPerSec / ceiling.reqPerSec,
      cpuUs: server.cpuUsPerRequest,
      mainCpuUs: server.mainCpuUsPerRequest,
      errors: server.errors,
    },
    {
      scenario,
      subject: `hello-world ceiling (${bodyBytes} B body)`,
      throughput: ceiling.reqPerSec,
      unit: 'req/s',
      p50Ms: ceiling.p50Ms,
      p99Ms: ceiling.p99Ms,
      cpuUs: ceiling.cpuUsPerRequest,
      mainCpuUs: ceiling.mainCpuUsPerRequest,
      errors: ceiling.errors,
    },
  ];
}

/**
 * Prepares a server, starts the ceiling with the same body size, then measures both in
 * alternating rounds with the same wrk settings (best round of each).
 */
async function serverAndCeiling(
  ctx: Ctx,
  connections: number,
  prepare: (base: string) => Promise<string>,
): Promise<{ server: Measured; ceiling: Measured; bodyBytes: number }> {
  const server = await startServer(ctx.serverNodeArgs);
  let hello: Child | undefined;
  try {
    const path = await prepare(server.url);
    const bodyBytes = Buffer.byteLength((await expect(server.url, 'GET', path, undefined, [200])).text);
    const ceiling = await startHello(bodyBytes);
    hello = ceiling;
    const run = (pid: number, url: string) => () =>
      warmAndMeasure(ctx, pid, { url, threads: 1, connections, durationSec: ctx.durationSec });
    const best = await bestOf(
      ctx.rounds,
      { server: run(server.pid, server.url + path), ceiling: run(ceiling.pid, ceiling.url + '/') },
      (r) => r.reqPerSec,
    );
    return { ...best, bodyBytes };
  } finally {
    await hello?.stop();
    await server.stop();
    server.cleanup();
  }
}

export async function getScenario(ctx: Ctx): Promise<ScenarioResult> {
  const ns = 'bench-get';
  const { server, ceiling, bodyBytes } = await serverAndCeiling(ctx, ctx.connections, async (base) => {
    await ensureNamespace(base, ns);
    const size = OBJECT_BYTES - (await servedOverhead(base, ns));
    await expect(base, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMapJson('one', size), [201]);
    return `/api/v1/namespaces/${ns}/configmaps/one`;
  });
  const ratio = server.reqPerSec / ceiling.reqPerSec;
  return {
    name: 'get',
    rows: rows('get', server, ceiling, bodyBytes),
    verdicts: [
      {
        target: 'GET ≥ 60% of the hello-world ceiling req/s, ≤ 12 µs CPU per request (issue 24)',
        measured: `${(ratio * 100).toFixed(1)}% (${server.reqPerSec.toFixed(0)} vs ${ceiling.reqPerSec.toFixed(0)} req/s; CPU per request ${server.cpuUsPerRequest.toFixed(1)} vs ${ceiling.cpuUsPerRequest.toFixed(1)} µs)`,
        met: ratio >= 0.6 && server.cpuUsPerRequest <= 12,
      },
    ],
    commands: [
      `# get: apiserver and hello-world (${bodyBytes} B), alternating, best of ${ctx.rounds}`,
      server.command,
      ceiling.command,
    ],
    notes: [],
  };
}

export async function listScenario(ctx: Ctx): Promise<ScenarioResult> {
  const ns = 'bench-list';
  const connections = Math.min(ctx.connections, LIST_MAX_CONNECTIONS);
  const { server, ceiling, bodyBytes } = await serverAndCeiling(ctx, connections, async (base) => {
    await ensureNamespace(base, ns);
    const size = OBJECT_BYTES - (await servedOverhead(base, ns));
    await parallel(LIST_ITEMS, 32, async (i) => {
      await expect(
        base,
        'POST',
        `/api/v1/namespaces/${ns}/configmaps`,
        configMapJson(`cm-${String(i).padStart(4, '0')}`, size),
        [201],
      );
    });
    return `/api/v1/namespaces/${ns}/configmaps`;
  });
  return {
    name: 'list',
    rows: rows('list', server, ceiling, bodyBytes),
    verdicts: [
      {
        target: `LIST of ${LIST_ITEMS} ConfigMaps ≥ 1,500 req/s, ≤ 1.2 µs CPU per listed item (issue 24)`,
        measured: `${server.reqPerSec.toFixed(0)} req/s (${(bodyBytes / 1024).toFixed(0)} KiB per response; ${((100 * server.reqPerSec) / ceiling.reqPerSec).toFixed(1)}% of the ceiling), ${(server.cpuUsPerRequest / LIST_ITEMS).toFixed(2)} µs CPU per item`,
        met: server.reqPerSec >= 1500 && server.cpuUsPerRequest / LIST_ITEMS <= 1.2,
      },
    ],
    commands: [
      `# list: apiserver (${LIST_ITEMS} ConfigMaps prefilled) and hello-world (${bodyBytes} B), alternating, best of ${ctx.rounds}`,
      server.command,
      ceiling.command,
    ],
    notes: [
      `${connections} connections (capped at ${LIST_MAX_CONNECTIONS}: each response is ${(bodyBytes / 1024).toFixed(0)} KiB)`,
    ],
  };
}
