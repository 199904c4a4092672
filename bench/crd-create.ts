/**
 * Create throughput of a custom resource with a 30-field schema (types, bounds, a pattern, an
 * enum, defaults) against a ConfigMap whose request body has the same byte size, on one
 * server, alternating rounds (best of each kept). Target: the custom resource at >= 70% of the
 * ConfigMap. Usage: node dist/bench/crd-create.js [--duration 5] [--connections 32] [--rounds 2]
 */
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/procs.js';
import { ensureNamespace } from './lib/http.js';
import { runTag, warmAndMeasure, bestOf, type Measured } from './scenarios/common.js';
import { GROUP, NS, benchCtx, createCRD, schema, spec } from './lib/crd-schema.js';

const SCRIPT = fileURLToPath(new URL('../../bench/template-create.lua', import.meta.url));

async function main(): Promise<void> {
  const ctx = benchCtx();
  const server = await startServer();
  try {
    await ensureNamespace(server.url, NS);
    const crPath = await createCRD(server.url, 'widgets', 'Widget', schema());
    const crPrefix = `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"`;
    const crSuffix = `","labels":{"bench":"crd"}},"spec":${JSON.stringify(spec())}}`;
    const cmPrefix = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"';
    const cmHead = '","labels":{"bench":"crd"}},"data":{"pad":"';
    const padBytes = crPrefix.length + crSuffix.length - cmPrefix.length - cmHead.length - 2;
    const cmSuffix = `${cmHead}${'x'.repeat(padBytes)}"}}`;
    console.log(
      `request body without the name: custom resource ${crPrefix.length + crSuffix.length} bytes, ConfigMap ${cmPrefix.length + cmSuffix.length} bytes`,
    );
    const tag = runTag('k');
    const run = (path: string, prefix: string, suffix: string, round: number) => ({
      url: server.url + path,
      threads: 1,
      connections: ctx.connections,
      durationSec: ctx.durationSec,
      script: SCRIPT,
      scriptArgs: [`${tag}m${round}`, '201', prefix, suffix],
    });
    const best = await bestOf<'configmap' | 'custom', Measured>(
      ctx.rounds,
      {
        configmap: (round) =>
          warmAndMeasure(ctx, server.pid, run(`/api/v1/namespaces/${NS}/configmaps`, cmPrefix, cmSuffix, round), [
            `${tag}w${round}`,
            '201',
            cmPrefix,
            cmSuffix,
          ]),
        custom: (round) =>
          warmAndMeasure(ctx, server.pid, run(crPath, crPrefix, crSuffix, round), [
            `${tag}w${round}`,
            '201',
            crPrefix,
            crSuffix,
          ]),
      },
      (r) => (r.reqPerSec * (r.requests - r.errors)) / Math.max(1, r.requests),
    );
    const ok = (r: Measured) => (r.reqPerSec * (r.requests - r.errors)) / Math.max(1, r.requests);
    const ratio = ok(best.custom) / ok(best.configmap);
    console.log(
      `\n| Create | req/s | p50 ms | p99 ms | CPU µs/req | errors |\n| --- | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const [name, r] of [
      ['ConfigMap', best.configmap],
      ['custom resource (30-field schema)', best.custom],
    ] as const) {
      console.log(
        `| ${name} | ${ok(r).toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.cpuUsPerRequest.toFixed(1)} | ${r.errors} |`,
      );
    }
    console.log(`\ncustom resource / ConfigMap: ${(ratio * 100).toFixed(0)}% (target >= 70%)`);
  } finally {
    await server.stop();
    server.cleanup();
  }
}

await main();
