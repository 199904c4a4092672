/**
 * watch-fanout: --watchers watches on one namespace and a writer patching its ConfigMaps at
 * --write-rate (open loop), each write stamped with its send time: delivery rate and
 * write-to-delivery latency. informers: --informers clients over up to --namespaces
 * namespaces, each listing then watching with timeoutSeconds=--relist, relisting when the
 * server ends the watch, while a writer patches at --write-rate.
 */
import { Hdr } from '../hdr.js';
import { openLoop, sleep } from '../engine.js';
import { cmPath, dropNamespace, ensureNamespace, fill, measured, type ScenarioCtx } from './ctx.js';

const OBJECTS = 10;
const SENT = 'bench.plat.io/sent';
const DRAIN_MS = 5000;
const OPEN_MS = 20_000;
const MAX_CYCLES = 100_000;

/** A merge patch stamping object k with the send time (performance.now() of this process). */
function stamp(ctx: ScenarioCtx, ns: string, k: number, phase?: string) {
  return ctx.client.call({
    verb: 'PATCH', resource: 'configmaps', phase, method: 'PATCH', path: cmPath(ns, `cm-${k}`), contentType: 'application/merge-patch+json',
    body: JSON.stringify({ metadata: { annotations: { [SENT]: performance.now().toFixed(3) } } }),
  });
}

async function listRV(ctx: ScenarioCtx, ns: string, phase = 'setup'): Promise<string | undefined> {
  const a = await ctx.client.call({ verb: 'LIST', resource: 'configmaps', phase, method: 'GET', path: cmPath(ns) });
  return a.status === 200 ? JSON.parse(a.body.toString('utf8')).metadata?.resourceVersion : undefined;
}

async function until(cond: () => boolean, ms: number, stop: AbortSignal): Promise<void> {
  const end = performance.now() + ms;
  while (!cond() && performance.now() < end && !stop.aborted) await sleep(20, stop);
}

export async function watchFanoutScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-fanout`;
  const W = ctx.opts.watchers;
  Object.assign(ctx.params, { watchers: W, writeRate: ctx.opts.writeRate, objects: OBJECTS });
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, OBJECTS);
  const rv = await listRV(ctx, ns);
  const latency = new Hdr();
  let delivered = 0;
  let opened = 0;
  const watches = new AbortController();
  const onStop = (): void => watches.abort();
  ctx.stop.addEventListener('abort', onStop, { once: true });
  const streams = Array.from({ length: W }, () => ctx.client.watch(
    { verb: 'WATCH', resource: 'configmaps' }, `${cmPath(ns)}?watch=1&resourceVersion=${rv}`, watches.signal,
    (ev, at) => {
      const sent = Number(ev?.object?.metadata?.annotations?.[SENT]);
      if (ev.type === 'MODIFIED' && Number.isFinite(sent)) { delivered++; latency.recordMs(at - sent); }
    },
    (status) => { if (status === 200) opened++; },
  ));
  await until(() => opened >= W, OPEN_MS, ctx.stop);
  let written = 0;
  const t0 = performance.now();
  await measured(ctx, (signal) => openLoop({
    qps: ctx.opts.writeRate, maxRequests: ctx.opts.maxRequests, maxInFlight: 64, signal,
    step: async (i) => { if ((await stamp(ctx, ns, i % OBJECTS)).status === 200) written++; },
  }));
  await until(() => delivered >= written * opened, DRAIN_MS, ctx.stop);
  const sec = (performance.now() - t0) / 1000;
  watches.abort();
  await Promise.all(streams);
  ctx.stop.removeEventListener('abort', onStop);
  Object.assign(ctx.figures, {
    watchersOpen: opened, writes: written, deliveriesExpected: written * opened, deliveries: delivered,
    deliveriesPerSec: delivered / sec, deliveryP50Ms: latency.percentileMs(50), deliveryP90Ms: latency.percentileMs(90),
    deliveryP99Ms: latency.percentileMs(99), deliveryMaxMs: latency.maxUs / 1000,
  });
  await dropNamespace(ctx, ns);
}

export async function informersScenario(ctx: ScenarioCtx): Promise<void> {
  const N = ctx.opts.informers;
  const nsCount = Math.max(1, Math.min(N, ctx.opts.namespaces));
  const names = Array.from({ length: nsCount }, (_, i) => `${ctx.tag}-inf-${i}`);
  Object.assign(ctx.params, { informers: N, namespaces: nsCount, objectsPerNamespace: OBJECTS, relistSec: ctx.opts.relistSec, writeRate: ctx.opts.writeRate });
  for (const ns of names) {
    await ensureNamespace(ctx, ns);
    await fill(ctx, ns, OBJECTS);
  }
  let events = 0;
  let relists = 0;
  let gone = 0;
  const informer = async (i: number, signal: AbortSignal): Promise<void> => {
    const ns = names[i % nsCount]!;
    for (let cycle = 0; cycle < MAX_CYCLES && !signal.aborted; cycle++) {
      const rv = await listRV(ctx, ns, 'measure');
      if (cycle > 0) relists++;
      if (rv === undefined) { await sleep(100, signal); continue; }
      let expired = false;
      // the server ends the watch after timeoutSeconds; the signal ends it at the deadline
      const status = await ctx.client.watch({ verb: 'WATCH', resource: 'configmaps' }, `${cmPath(ns)}?watch=1&resourceVersion=${rv}&timeoutSeconds=${ctx.opts.relistSec}`, signal, (ev) => {
        if (ev.type === 'ERROR') expired = true;
        else events++;
      });
      if (expired) gone++;
      if (status !== 200) await sleep(100, signal); // a refused watch: back off before relisting
    }
  };
  await measured(ctx, (signal) => Promise.all([
    ...Array.from({ length: N }, (_, i) => informer(i, signal)),
    openLoop({ qps: ctx.opts.writeRate, maxRequests: ctx.opts.maxRequests, maxInFlight: 64, signal, step: (i) => stamp(ctx, names[i % nsCount]!, i % OBJECTS) }),
  ]));
  Object.assign(ctx.figures, { watchEvents: events, relists, watchExpired: gone });
  for (const ns of names) await dropNamespace(ctx, ns);
}
