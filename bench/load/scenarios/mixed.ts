/**
 * mixed: a weighted mix of get, list, create, update, apply and delete on ConfigMaps at --qps,
 * open loop: request i is due at start + i / qps whatever the answers do, and its latency is
 * counted from when it was due, so queueing in a slow server shows in the figures (no
 * coordinated omission). At most 4 × --concurrency requests are in flight; later ones wait, late.
 */
import { openLoop } from '../engine.js';
import { cmPath, configMap, dropNamespace, ensureNamespace, fill, measured, type ScenarioCtx } from './ctx.js';
import { mulberry32 } from '../../lib/mulberry32.js';

const POOL = 50;
export const MIX_KINDS = ['get', 'list', 'create', 'update', 'apply', 'delete'];
export const MIX: [string, number][] = [
  ['get', 40],
  ['list', 10],
  ['create', 15],
  ['update', 15],
  ['apply', 10],
  ['delete', 10],
];

/** A small deterministic PRNG, so runs draw the same mix. */
const rng = mulberry32;

export async function mixedScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-mixed`;
  const mix = ctx.opts.mix;
  Object.assign(ctx.params, {
    qps: ctx.opts.qps,
    mix: Object.fromEntries(mix),
    pool: POOL,
    maxInFlight: 4 * ctx.opts.concurrency,
  });
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, POOL, 'p');
  const total = mix.reduce((s, [, w]) => s + w, 0);
  const rand = rng(42);
  const created: string[] = [];
  let lag = 0;
  await measured(ctx, async (signal) => {
    const r = await openLoop({
      qps: ctx.opts.qps,
      maxRequests: ctx.opts.maxRequests,
      maxInFlight: 4 * ctx.opts.concurrency,
      signal,
      step: async (i, scheduledAt) => {
        let x = rand() * total;
        let kind = mix[0]![0];
        for (const [k, w] of mix) {
          if (x < w) {
            kind = k;
            break;
          }
          x -= w;
        }
        const p = `p-${i % POOL}`;
        const c = ctx.client;
        switch (kind) {
          case 'get':
            return c.call({ verb: 'GET', resource: 'configmaps', method: 'GET', path: cmPath(ns, p), scheduledAt });
          case 'list':
            return c.call({
              verb: 'LIST',
              resource: 'configmaps',
              method: 'GET',
              path: cmPath(ns) + '?labelSelector=bench%3Dtrue',
              scheduledAt,
            });
          case 'create': {
            const a = await c.call({
              verb: 'POST',
              resource: 'configmaps',
              method: 'POST',
              path: cmPath(ns),
              body: configMap(`m-${i}`),
              scheduledAt,
            });
            if (a.status === 201) created.push(`m-${i}`);
            return a;
          }
          case 'update':
            return c.call({
              verb: 'PUT',
              resource: 'configmaps',
              method: 'PUT',
              path: cmPath(ns, p),
              body: configMap(p, 1024, { round: String(i) }),
              scheduledAt,
            });
          case 'apply':
            return c.call({
              verb: 'APPLY',
              resource: 'configmaps',
              method: 'PATCH',
              path: cmPath(ns, `a-${i % POOL}`) + '?fieldManager=bench-mixed&force=true',
              contentType: 'application/apply-patch+yaml',
              body: JSON.stringify({
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: `a-${i % POOL}` },
                data: { round: String(i) },
              }),
              scheduledAt,
            });
          default: {
            const victim = created.shift();
            if (victim === undefined)
              return c.call({ verb: 'GET', resource: 'configmaps', method: 'GET', path: cmPath(ns, p), scheduledAt });
            return c.call({
              verb: 'DELETE',
              resource: 'configmaps',
              method: 'DELETE',
              path: cmPath(ns, victim),
              scheduledAt,
            });
          }
        }
      },
    });
    lag = r.lagMs;
  });
  ctx.figures.scheduleLagAtEndMs = lag;
  await dropNamespace(ctx, ns);
}
