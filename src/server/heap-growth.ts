/**
 * Caps how far V8 lets each thread's old generation grow past what its last full collection
 * kept: to 1 + HEAP_GROWING_PERCENT / 100 times it, instead of V8's own factor (between 1.1 and
 * 4, chosen from its collection and allocation speeds; ≈ 1.6–3 in the density runs), while the
 * process's RSS is at least CAP_ABOVE_RSS (512 MiB). Imported by
 * src/main.ts right after young-generation.ts, so it holds for the front thread, the shard
 * actors and every helper thread.
 *
 * Why (issue 24 item 7, docs/benchmarks.md "Density memory, ninth round"): at 150,000 Pods the
 * actor owning them held ≈ 480 MB live in ≈ 780 MB of committed old space, the front ≈ 155 MB in
 * ≈ 330 MB. Their old generations grow with garbage that was promoted (a create's parsed tree,
 * request state) until the limit, and a full collection frees that garbage inside pages still
 * holding live JSON, so the pages stay resident: the committed size follows the limit, not the
 * live size. A lower factor collects sooner and reuses the freed space, at the price of more
 * full collections (each marks the live heap, mostly concurrently).
 *
 * How: `--heap-growing-percent` is read each time a full collection sets the next limit, so
 * setting it at run time takes effect from the next one, in every isolate. Node re-applies the
 * command line's V8 flags when it starts a Worker, so it is set again (v8-flags.ts) on each 'worker' event
 * and after each collection of this thread (as young-generation.ts does for its flag). An
 * explicit `--heap-growing-percent` (command line or NODE_OPTIONS) wins.
 */
import { setFlagsFromString } from 'node:v8';
import { keepFlagsSet, startedWith } from './v8-flags.js';

/** The old generation grows to at most 1 + this / 100 times what the last full collection kept. */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Below this process RSS V8 picks its own factor: the benchmarks of single requests and small
 * stores (GET, create, apply, watch) keep small heaps, whose collections a lower factor would
 * only make more frequent; the free space the cap saves is in proportion to the live heap.
 */
export const CAP_ABOVE_RSS = 512 * 1024 * 1024;

/** CAP_ABOVE_RSS, or `PLAT_HEAP_CAP_ABOVE_MB` when set (tests). */
function capAboveFromEnv(): number {
  const mb = Number(process.env.PLAT_HEAP_CAP_ABOVE_MB);
  return process.env.PLAT_HEAP_CAP_ABOVE_MB && Number.isFinite(mb) && mb >= 0 ? mb * 1024 * 1024 : CAP_ABOVE_RSS;
}

const EXPLICIT = /--heap[-_]growing[-_]percent/;

/** Whether the process was started with its own growing factor (command line or NODE_OPTIONS). */
export function explicitHeapGrowing(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return startedWith(EXPLICIT, execArgv, nodeOptions);
}

/**
 * Sets the growing factor for every thread of the process while its RSS is at least
 * capAboveRss (0 below it: V8's own factor), unless flags chose one; set again after each GC
 * of this thread and on each Worker start.
 */
export function capHeapGrowing(capAboveRss = capAboveFromEnv()): boolean {
  if (explicitHeapGrowing(process.execArgv, process.env.NODE_OPTIONS)) return false;
  keepFlagsSet(() => {
    const percent = process.memoryUsage.rss() >= capAboveRss ? HEAP_GROWING_PERCENT : 0;
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  });
  return true;
}

capHeapGrowing();
