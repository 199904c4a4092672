/**
 * Create throughput of a custom resource with a 30-field schema (types, bounds, a pattern, an
 * enum, defaults) against a ConfigMap whose request body has the same byte size, on one
 * server, alternating rounds (best of each kept). Target: the custom resource at >= 70% of the
 * ConfigMap. Usage: node dist/bench/crd-create.js [--duration 5] [--connections 32] [--rounds 2]
 */
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/procs.js';
import { ensureNamespace, expect } from './lib/http.js';
import { runTag, warmAndMeasure, bestOf, type Ctx, type Measured } from './scenarios/common.js';
import { arg, schema } from './lib/crd-schema.js';

const SCRIPT = fileURLToPath(new URL('../../bench/template-create.lua', import.meta.url));
const NS = 'bench-crd';
const GROUP = 'bench.example.com';

function spec(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 1; i <= 30; i++) {
    const k = `f${String(i).padStart(2, '0')}`;
    out[k] = i % 3 === 0 ? i * 1000 : i % 5 === 0 ? 'beta' : i % 7 === 0 ? true : `value-of-field-${i}`;
  }
  return out;
}

async function main(): Promise<void> {
  const ctx: Ctx = { durationSec: arg('duration', 5), connections: arg('connections', 32), rounds: arg('rounds', 2), serverNodeArgs: [], log: (m) => console.log(m) };
  const server = await startServer();
  try {
    await ensureNamespace(server.url, NS);
    const crd = {
      apiVersion: 'apiextensions.plat.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `widgets.${GROUP}` },
      spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema() } }] },
    };
    await expect(server.url, 'POST', '/apis/apiextensions.plat.io/v1/customresourcedefinitions', JSON.stringify(crd), [201]);
    const crPath = `/apis/${GROUP}/v1/namespaces/${NS}/widgets`;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await expect(server.url, 'GET', crPath, undefined, [200, 404])).status !== 200) await new Promise((r) => setTimeout(r, 50));
    const crPrefix = `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"`;
    const crSuffix = `","labels":{"bench":"crd"}},"spec":${JSON.stringify(spec())}}`;
    const cmPrefix = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"';
    const cmHead = '","labels":{"bench":"crd"}},"data":{"pad":"';
    const padBytes = crPrefix.length + crSuffix.length - cmPrefix.length - cmHead.length - 2;
    const cmSuffix = `${cmHead}${'x'.repeat(padBytes)}"}}`;
    console.log(`request body without the name: custom resource ${crPrefix.length + crSuffix.length} bytes, ConfigMap ${cmPrefix.length + cmSuffix.length} bytes`);
    const tag = runTag('k');
    const run = (path: string, prefix: string, suffix: string, round: number) => ({
      url: server.url + path, threads: 1, connections: ctx.connections, durationSec: ctx.durationSec, script: SCRIPT,
      scriptArgs: [`${tag}m${round}`, '201', prefix, suffix],
    });
    const best = await bestOf<'configmap' | 'custom', Measured>(ctx.rounds, {
      configmap: (round) => warmAndMeasure(ctx, server.pid, run(`/api/v1/namespaces/${NS}/configmaps`, cmPrefix, cmSuffix, round), [`${tag}w${round}`, '201', cmPrefix, cmSuffix]),
      custom: (round) => warmAndMeasure(ctx, server.pid, run(crPath, crPrefix, crSuffix, round), [`${tag}w${round}`, '201', crPrefix, crSuffix]),
    }, (r) => r.reqPerSec * (r.requests - r.errors) / Math.max(1, r.requests));
    const ok = (r: Measured) => r.reqPerSec * (r.requests - r.errors) / Math.max(1, r.requests);
    const ratio = ok(best.custom) / ok(best.configmap);
    console.log(`\n| Create | req/s | p50 ms | p99 ms | CPU µs/req | errors |\n| --- | ---: | ---: | ---: | ---: | ---: |`);
    for (const [name, r] of [['ConfigMap', best.configmap], ['custom resource (30-field schema)', best.custom]] as const) {
      console.log(`| ${name} | ${ok(r).toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.cpuUsPerRequest.toFixed(1)} | ${r.errors} |`);
    }
    console.log(`\ncustom resource / ConfigMap: ${(ratio * 100).toFixed(0)}% (target >= 70%)`);
  } finally {
    await server.stop();
    server.cleanup();
  }
}

await main();
