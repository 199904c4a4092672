/**
 * Ceilings measured in the same run with the same client: the bare uWebSockets.js hello-world
 * answering with a body of the measured response's size (reads), and raw LMDB batched puts
 * of ~1 KB values (durable writes).
 */
import { startHello } from '../lib/procs.js';
import { lmdbBatchedPuts } from '../lib/lmdb-ceiling.js';
import { Client } from './client.js';
import { closedLoop } from './engine.js';
import { Recorder } from './recorder.js';
import { measured, type ScenarioCtx } from './scenarios/ctx.js';

const MAX_CEILING_SEC = 5;

/** GETs against hello-world serving `bodyBytes`, same concurrency; records the figure next to `throughput`. */
export async function helloCeiling(
  ctx: ScenarioCtx,
  name: string,
  bodyBytes: number,
  throughput: number,
  comparedWith: string,
): Promise<void> {
  if (!ctx.opts.ceilings || ctx.stop.aborted) return;
  const hello = await startHello(Math.max(2, bodyBytes));
  const rec = new Recorder();
  const client = new Client(hello.url, {}, ctx.opts.concurrency, rec);
  try {
    const sec = await measured(
      ctx,
      (signal) =>
        closedLoop({
          concurrency: ctx.opts.concurrency,
          maxRequests: ctx.opts.maxRequests,
          signal,
          step: () => client.call({ verb: 'GET', resource: 'hello', method: 'GET', path: '/' }),
        }),
      Math.min(ctx.opts.durationSec, MAX_CEILING_SEC),
    );
    const perSec = rec.measured().requests / sec;
    ctx.ceilings.push({ name, throughputPerSec: perSec, unit: 'req/s', comparedWith, ratio: throughput / perSec });
  } finally {
    client.close();
    await hello.stop();
  }
}

/** Raw LMDB batched puts (batch = concurrency, 1 KB values), compared with a write throughput. */
export async function lmdbCeiling(ctx: ScenarioCtx, throughput: number, comparedWith: string): Promise<void> {
  if (!ctx.opts.ceilings || ctx.stop.aborted) return;
  const r = await lmdbBatchedPuts({
    durationSec: Math.min(ctx.opts.durationSec, MAX_CEILING_SEC),
    batch: Math.max(1, ctx.opts.concurrency),
    valueBytes: 1024,
    flushed: false,
    maxPuts: 10_000_000,
  });
  ctx.ceilings.push({
    name: `raw LMDB batched puts (batch ${ctx.opts.concurrency}, 1 KB)`,
    throughputPerSec: r.putsPerSec,
    unit: 'puts/s',
    comparedWith,
    ratio: throughput / r.putsPerSec,
  });
}
