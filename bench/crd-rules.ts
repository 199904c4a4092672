/**
 * Create throughput of a custom resource whose schema carries 20 validation rules (CEL,
 * x-plat-validations on spec and on fields) against the same CRD without rules, on one server,
 * alternating rounds (best of each kept). Target: with rules >= 70% of without (rules compile
 * once per CRD version; each create only evaluates them).
 * Usage: node dist/bench/crd-rules.js [--duration 5] [--connections 32] [--rounds 2]
 */
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/procs.js';
import { ensureNamespace, expect } from './lib/http.js';
import { runTag, warmAndMeasure, bestOf, type Measured } from './scenarios/common.js';
import { GROUP, NS, benchCtx, createCRD, schema, spec } from './lib/crd-schema.js';

const SCRIPT = fileURLToPath(new URL('../../bench/template-create.lua', import.meta.url));

/** 20 rules of the kinds operators publish: comparisons, string functions, has(), enums, quantities, lists. */
function rules(): { spec: unknown[]; field: Record<string, unknown[]> } {
  const spec = [
    { rule: 'self.f03 <= self.f06', message: 'f03 must not exceed f06' },
    { rule: 'self.f06 <= self.f09 * 10', message: 'f06 is at most ten times f09' },
    { rule: "self.f01.startsWith('value')" },
    { rule: "!has(self.f02) || self.f02.endsWith('-2')", message: 'f02 ends with -2' },
    { rule: 'has(self.f04) == has(self.f08)', message: 'f04 and f08 go together' },
    { rule: "self.f05 in ['alpha', 'beta', 'gamma']" },
    { rule: "self.f10 != 'alpha' || self.f12 > 0" },
    { rule: 'self.f07 == true || self.f14 == true', message: 'one of f07, f14' },
    { rule: 'size(self.f11) <= 64' },
    { rule: "self.f13.contains('field')", messageExpression: "'f13 is ' + self.f13" },
    { rule: 'self.f15 >= self.f12', message: 'f15 >= f12' },
    { rule: "!self.f16.matches('^admin')", message: 'f16 is reserved' },
    { rule: 'self.f18 + self.f21 < 1000000', message: 'sum too large' },
    { rule: 'self.f17.lowerAscii() == self.f17' },
    { rule: "isQuantity('100Mi') && quantity('100Mi').isLessThan(quantity('1Gi'))" },
    { rule: '[self.f24, self.f27, self.f30].all(x, x >= 0)' },
  ];
  const field = {
    f19: [{ rule: 'self.size() > 0', message: 'f19 must not be empty' }],
    f22: [{ rule: "self != 'forbidden'" }],
    f23: [{ rule: 'self.size() < 40' }],
    f26: [{ rule: "!self.startsWith('-')" }],
  };
  return { spec, field };
}

function withRules(s: any): any {
  const out = structuredClone(s);
  const r = rules();
  out.properties.spec['x-plat-validations'] = r.spec;
  for (const [k, list] of Object.entries(r.field)) out.properties.spec.properties[k]['x-plat-validations'] = list;
  return out;
}

async function main(): Promise<void> {
  const ctx = benchCtx();
  const server = await startServer();
  try {
    await ensureNamespace(server.url, NS);
    const plainPath = await createCRD(server.url, 'widgets', 'Widget', schema());
    const rulesPath = await createCRD(server.url, 'gadgets', 'Gadget', withRules(schema()));
    const body = (kind: string) =>
      [
        `{"apiVersion":"${GROUP}/v1","kind":"${kind}","metadata":{"name":"`,
        `","labels":{"bench":"crd"}},"spec":${JSON.stringify(spec())}}`,
      ] as const;
    const [wPrefix, wSuffix] = body('Widget');
    const [gPrefix, gSuffix] = body('Gadget');
    // the rules hold for the benchmark's objects: every create is a 201
    await expect(server.url, 'POST', rulesPath, `${gPrefix}check${gSuffix}`, [201]);
    const tag = runTag('r');
    const run = (path: string, prefix: string, suffix: string, round: number) => ({
      url: server.url + path,
      threads: 1,
      connections: ctx.connections,
      durationSec: ctx.durationSec,
      script: SCRIPT,
      scriptArgs: [`${tag}m${round}`, '201', prefix, suffix],
    });
    const best = await bestOf<'none' | 'rules', Measured>(
      ctx.rounds,
      {
        none: (round) =>
          warmAndMeasure(ctx, server.pid, run(plainPath, wPrefix, wSuffix, round), [
            `${tag}w${round}`,
            '201',
            wPrefix,
            wSuffix,
          ]),
        rules: (round) =>
          warmAndMeasure(ctx, server.pid, run(rulesPath, gPrefix, gSuffix, round), [
            `${tag}w${round}`,
            '201',
            gPrefix,
            gSuffix,
          ]),
      },
      (r) => (r.reqPerSec * (r.requests - r.errors)) / Math.max(1, r.requests),
    );
    const ok = (r: Measured) => (r.reqPerSec * (r.requests - r.errors)) / Math.max(1, r.requests);
    console.log(
      `\n| Create | req/s | p50 ms | p99 ms | CPU µs/req | errors |\n| --- | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const [name, r] of [
      ['custom resource, no rules', best.none],
      ['custom resource, 20 validation rules', best.rules],
    ] as const) {
      console.log(
        `| ${name} | ${ok(r).toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.cpuUsPerRequest.toFixed(1)} | ${r.errors} |`,
      );
    }
    console.log(`\nwith rules / without: ${((ok(best.rules) / ok(best.none)) * 100).toFixed(0)}% (target >= 70%)`);
  } finally {
    await server.stop();
    server.cleanup();
  }
}

await main();
