/**
 * Batch selection of the shard queues (src/actors/pool.ts): how many heavy ops one batch takes.
 */
import type { Op, Result } from './protocol.js';

export type Pending = { op: Op; resolve: (r: Result) => void };

/**
 * A batch's replies all arrive when its last op is done, so a few large LISTs in a batch would
 * hold every small op behind them (a controller's write behind a flood of whole-collection
 * LISTs waited seconds). A batch therefore takes every queued small op but at most
 * HEAVY_PER_BATCH heavy ones (LISTs without a small limit, DELETE collection) in arrival order;
 * the rest wait for the next batch. Ops in one batch are concurrent requests, so their order
 * among themselves carries no meaning.
 */
/** the default (--actor-heavy-per-batch overrides, for benchmarking) */
export const HEAVY_PER_BATCH = 4;
const SMALL_LIST = 250;

function heavy(op: Op): boolean {
  if (op.op === 'deletecollection') return true;
  return op.op === 'list' && !(op.opts.limit !== undefined && op.opts.limit <= SMALL_LIST);
}

export function takeBatch(s: { queue: Pending[] }, heavyPerBatch = HEAVY_PER_BATCH): Pending[] {
  let heavyCount = 0;
  const take: Pending[] = [];
  const keep: Pending[] = [];
  for (const p of s.queue) {
    if (heavy(p.op) && ++heavyCount > heavyPerBatch) keep.push(p);
    else take.push(p);
  }
  s.queue = keep;
  return take;
}
