/**
 * Single-resource scenarios, closed loop with --concurrency workers for --duration:
 * get (one ~1 KB ConfigMap), list (--objects ConfigMaps as JSON and Protobuf, whole and in
 * pages), create (durable creates of ~1 KB ConfigMaps), update (PUT with the cached
 * resourceVersion over fewer objects than workers, so conflicts happen; a 409 re-reads and
 * retries, at most MAX_RETRIES times).
 */
import { helloCeiling, lmdbCeiling } from '../ceilings.js';
import { closedLoop } from '../engine.js';
import { cmPath, configMap, dropNamespace, ensureNamespace, fill, measured, type ScenarioCtx } from './ctx.js';
import { protobufContinue } from './protobuf.js';

const MAX_RETRIES = 10;
const WARMUP_LISTS = 5;
/** upstream's type first; this server names it after its product (vnd.platform.protobuf unless --api-domain says otherwise) */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf, application/vnd.platform.protobuf';

export async function getScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-get`;
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, 1, 'one');
  const path = cmPath(ns, 'one-0');
  const sec = await measured(ctx, (signal) =>
    closedLoop({
      concurrency: ctx.opts.concurrency,
      maxRequests: ctx.opts.maxRequests,
      signal,
      step: () => ctx.client.call({ verb: 'GET', resource: 'configmaps', method: 'GET', path }),
    }),
  );
  const op = ctx.client.recorder.ops.get('GET configmaps');
  const perSec = (op?.requests ?? 0) / sec;
  await dropNamespace(ctx, ns);
  await helloCeiling(
    ctx,
    'hello-world, same body size',
    op?.requests ? op.bytes / op.requests : 1024,
    perSec,
    'GET configmaps',
  );
}

export async function listScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-list`;
  const n = ctx.opts.objects;
  const pageSize = Math.max(1, Math.ceil(n / 5));
  ctx.params.objects = n;
  ctx.params.pageSize = pageSize;
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, n);
  const variants: { phase: string; accept?: string; chunked: boolean }[] = [
    { phase: 'json', chunked: false },
    { phase: 'json-chunked', chunked: true },
    { phase: 'protobuf', accept: PROTOBUF, chunked: false },
    { phase: 'protobuf-chunked', accept: PROTOBUF, chunked: true },
  ];
  const per = Math.max(0.25, ctx.opts.durationSec / variants.length);
  for (const v of variants) {
    if (ctx.stop.aborted) break;
    const fullList = async (phase: string): Promise<void> => {
      let cont = '';
      // one full list: every page, at most n / pageSize + 1 pages
      for (let page = 0; page <= n / pageSize + 1; page++) {
        const q = v.chunked ? `?limit=${pageSize}${cont ? '&continue=' + encodeURIComponent(cont) : ''}` : '';
        const a = await ctx.client.call({
          verb: 'LIST',
          resource: 'configmaps',
          phase,
          method: 'GET',
          path: cmPath(ns) + q,
          accept: v.accept,
        });
        if (!v.chunked || a.status !== 200) return;
        cont = v.accept ? protobufContinue(a.body) : (JSON.parse(a.body.toString('utf8')).metadata?.continue ?? '');
        if (!cont) return;
      }
    };
    // warm-up (first use of an encoding compiles its code paths), counted as set-up
    for (let i = 0; i < WARMUP_LISTS && !ctx.stop.aborted; i++) await fullList('setup');
    const sec = await measured(
      ctx,
      (signal) =>
        closedLoop({
          concurrency: ctx.opts.concurrency,
          maxRequests: ctx.opts.maxRequests,
          signal,
          step: () => fullList(v.phase),
        }),
      per,
    );
    const op = ctx.client.recorder.ops.get(`${v.phase} LIST configmaps`);
    if (op)
      ctx.figures[`${v.phase}.fullListsPerSec`] =
        (v.chunked ? op.requests / Math.ceil(n / pageSize) : op.requests) / sec;
  }
  const whole = ctx.client.recorder.ops.get('json LIST configmaps');
  await dropNamespace(ctx, ns);
  if (whole?.requests)
    await helloCeiling(
      ctx,
      'hello-world, same body size as the JSON list',
      whole.bytes / whole.requests,
      ctx.figures['json.fullListsPerSec'] ?? 0,
      'json LIST configmaps',
    );
}

export async function createScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-create`;
  await ensureNamespace(ctx, ns);
  const sec = await measured(ctx, (signal) =>
    closedLoop({
      concurrency: ctx.opts.concurrency,
      maxRequests: ctx.opts.maxRequests,
      signal,
      step: (_w, i) =>
        ctx.client.call({
          verb: 'POST',
          resource: 'configmaps',
          method: 'POST',
          path: cmPath(ns),
          body: configMap(`c-${i}`),
        }),
    }),
  );
  const op = ctx.client.recorder.ops.get('POST configmaps');
  await dropNamespace(ctx, ns);
  await lmdbCeiling(ctx, (op?.requests ?? 0) / sec, 'POST configmaps');
}

export async function updateScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-update`;
  const objects = Math.max(1, Math.ceil(ctx.opts.concurrency / 4));
  ctx.params.objects = objects;
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, objects, 'u');
  const cache: any[] = [];
  for (let i = 0; i < objects; i++)
    cache[i] = await ctx.client.must({
      verb: 'GET',
      resource: 'configmaps',
      phase: 'setup',
      method: 'GET',
      path: cmPath(ns, `u-${i}`),
    });
  let conflicts = 0;
  let gaveUp = 0;
  let updates = 0;
  await measured(ctx, (signal) =>
    closedLoop({
      concurrency: ctx.opts.concurrency,
      maxRequests: ctx.opts.maxRequests,
      signal,
      step: async (w, i) => {
        const k = w % objects;
        for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
          const obj = cache[k];
          const body = JSON.stringify({ ...obj, data: { ...obj.data, round: String(i) } });
          const a = await ctx.client.call({
            verb: 'PUT',
            resource: 'configmaps',
            method: 'PUT',
            path: cmPath(ns, `u-${k}`),
            body,
          });
          if (a.status === 200) {
            cache[k] = JSON.parse(a.body.toString('utf8'));
            updates++;
            return;
          }
          if (a.status !== 409 || signal.aborted) return;
          conflicts++;
          const fresh = await ctx.client.call({
            verb: 'GET',
            resource: 'configmaps',
            method: 'GET',
            path: cmPath(ns, `u-${k}`),
          });
          if (fresh.status === 200) cache[k] = JSON.parse(fresh.body.toString('utf8'));
        }
        gaveUp++;
      },
    }),
  );
  Object.assign(ctx.figures, { updates, conflicts, gaveUpAfterRetries: gaveUp });
  await dropNamespace(ctx, ns);
}
