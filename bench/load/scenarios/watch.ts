/**
 * watch-fanout: --watchers watches on one namespace, opened by worker threads (up to 4, 250
 * watches each: reading events must not delay the writer's loop), and a writer patching its
 * ConfigMaps at --write-rate (open loop), each write stamped with its send time: delivery rate
 * and write-to-delivery latency. informers: --informers clients over up to --namespaces
 * namespaces, each listing then watching with timeoutSeconds=--relist, relisting when the
 * server ends the watch, while a writer patches at --write-rate.
 */
import { Worker } from 'node:worker_threads';
import { Hdr } from '../hdr.js';
import { now, type WatchWorkerDone, type WatchWorkerInit } from '../watch-worker.js';
import { openLoop, sleep } from '../engine.js';
import { cmPath, dropNamespace, ensureNamespace, fill, measured, type ScenarioCtx } from './ctx.js';

const OBJECTS = 10;
const SENT = 'bench.plat.io/sent';
const DRAIN_MS = 5000;
const OPEN_MS = 20_000;
const MAX_CYCLES = 100_000;
const CLOSE_MS = 10_000;
/** watches per worker thread, and at most this many threads (2 vCPUs here: more would only contend) */
const WATCHES_PER_THREAD = 250;
const MAX_THREADS = 4;
const WORKER = new URL('../watch-worker.js', import.meta.url);

/** A merge patch stamping object k with the send time (epoch ms, comparable across threads). */
function stamp(ctx: ScenarioCtx, ns: string, k: number, phase?: string) {
  return ctx.client.call({
    verb: 'PATCH',
    resource: 'configmaps',
    phase,
    method: 'PATCH',
    path: cmPath(ns, `cm-${k}`),
    contentType: 'application/merge-patch+json',
    body: JSON.stringify({ metadata: { annotations: { [SENT]: now().toFixed(3) } } }),
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

interface WatchThread {
  worker: Worker;
  delivered: number;
  done: Promise<WatchWorkerDone>;
}

/** Starts a watch worker thread for `count` watches; `onOpen` hears each watch's status. */
function startThread(ctx: ScenarioCtx, path: string, count: number, onOpen: (status: number) => void): WatchThread {
  const worker = new Worker(WORKER, {
    workerData: { ...ctx.client.target(path), count, sentKey: SENT } satisfies WatchWorkerInit,
  });
  const t: WatchThread = { worker, delivered: 0, done: undefined as unknown as Promise<WatchWorkerDone> };
  t.done = new Promise<WatchWorkerDone>((resolve, reject) => {
    worker.on('message', (m: { type: string; status?: number; delivered?: number }) => {
      if (m.type === 'open') onOpen(m.status!);
      else if (m.type === 'count') t.delivered = m.delivered!;
      else if (m.type === 'done') resolve(m as WatchWorkerDone);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`watch worker exited with ${code} before reporting`)));
  });
  return t;
}

export async function watchFanoutScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-fanout`;
  const W = ctx.opts.watchers;
  const threads = Math.min(MAX_THREADS, Math.ceil(W / WATCHES_PER_THREAD));
  Object.assign(ctx.params, { watchers: W, watchThreads: threads, writeRate: ctx.opts.writeRate, objects: OBJECTS });
  await ensureNamespace(ctx, ns);
  await fill(ctx, ns, OBJECTS);
  const rv = await listRV(ctx, ns);
  let opened = 0;
  let answered = 0;
  const onOpen = (status: number): void => {
    answered++;
    if (status === 200) opened++;
  };
  const path = `${cmPath(ns)}?watch=1&resourceVersion=${rv}`;
  const pool = Array.from({ length: threads }, (_, t) =>
    startThread(ctx, path, Math.floor(W / threads) + (t < W % threads ? 1 : 0), onOpen),
  );
  const delivered = (): number => pool.reduce((a, t) => a + t.delivered, 0);
  try {
    await until(() => answered >= W, OPEN_MS, ctx.stop);
    let written = 0;
    const t0 = performance.now();
    await measured(ctx, (signal) =>
      openLoop({
        qps: ctx.opts.writeRate,
        maxRequests: ctx.opts.maxRequests,
        maxInFlight: 64,
        signal,
        step: async (i) => {
          if ((await stamp(ctx, ns, i % OBJECTS)).status === 200) written++;
        },
      }),
    );
    await until(() => delivered() >= written * opened, DRAIN_MS, ctx.stop);
    const sec = (performance.now() - t0) / 1000;
    for (const t of pool) t.worker.postMessage({ type: 'close' });
    const results = await Promise.race([
      Promise.all(pool.map((t) => t.done)),
      sleep(CLOSE_MS).then(() => {
        throw new Error(`watch threads did not report within ${CLOSE_MS} ms`);
      }),
    ]);
    const latency = new Hdr();
    let total = 0;
    for (const r of results) {
      total += r.delivered;
      latency.merge(Hdr.fromSparse(r.latency));
      for (const w of r.watches)
        ctx.client.recorder.record({ verb: 'WATCH', resource: 'configmaps' }, w.status, w.ms, w.bytes);
    }
    Object.assign(ctx.figures, {
      watchersOpen: opened,
      writes: written,
      deliveriesExpected: written * opened,
      deliveries: total,
      deliveriesPerSec: total / sec,
      deliveryP50Ms: latency.percentileMs(50),
      deliveryP90Ms: latency.percentileMs(90),
      deliveryP99Ms: latency.percentileMs(99),
      deliveryMaxMs: latency.maxUs / 1000,
    });
  } finally {
    await Promise.all(pool.map((t) => t.worker.terminate()));
  }
  await dropNamespace(ctx, ns);
}

export async function informersScenario(ctx: ScenarioCtx): Promise<void> {
  const N = ctx.opts.informers;
  const nsCount = Math.max(1, Math.min(N, ctx.opts.namespaces));
  const names = Array.from({ length: nsCount }, (_, i) => `${ctx.tag}-inf-${i}`);
  Object.assign(ctx.params, {
    informers: N,
    namespaces: nsCount,
    objectsPerNamespace: OBJECTS,
    relistSec: ctx.opts.relistSec,
    writeRate: ctx.opts.writeRate,
  });
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
      if (rv === undefined) {
        await sleep(100, signal);
        continue;
      }
      let expired = false;
      // the server ends the watch after timeoutSeconds; the signal ends it at the deadline
      const status = await ctx.client.watch(
        { verb: 'WATCH', resource: 'configmaps' },
        `${cmPath(ns)}?watch=1&resourceVersion=${rv}&timeoutSeconds=${ctx.opts.relistSec}`,
        signal,
        (ev) => {
          if (ev.type === 'ERROR') expired = true;
          else events++;
        },
      );
      if (expired) gone++;
      if (status !== 200) await sleep(100, signal); // a refused watch: back off before relisting
    }
  };
  await measured(ctx, (signal) =>
    Promise.all([
      ...Array.from({ length: N }, (_, i) => informer(i, signal)),
      openLoop({
        qps: ctx.opts.writeRate,
        maxRequests: ctx.opts.maxRequests,
        maxInFlight: 64,
        signal,
        step: (i) => stamp(ctx, names[i % nsCount]!, i % OBJECTS),
      }),
    ]),
  );
  Object.assign(ctx.figures, { watchEvents: events, relists, watchExpired: gone });
  for (const ns of names) await dropNamespace(ctx, ns);
}
