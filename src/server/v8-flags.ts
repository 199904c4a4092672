/**
 * V8 flags this process sets at run time and keeps set (young-generation.ts, heap-growth.ts).
 * Node re-applies the command line's V8 flags whenever it starts a Worker, resetting a flag set
 * with setFlagsFromString, so each setter runs now, on Node's 'worker' event and after every GC
 * of this thread (the reset lands on the worker's own schedule, so the event alone can come
 * before it). One listener and one GC observer serve every setter.
 */
import { PerformanceObserver } from 'node:perf_hooks';

const setters: Array<() => void> = [];

function setAll(): void {
  for (const set of setters) set();
}

/** Runs `set` now, and again whenever the flags it sets may have been reset. */
export function keepFlagsSet(set: () => void): void {
  set();
  if (setters.length === 0) {
    process.on('worker', setAll);
    new PerformanceObserver(setAll).observe({ entryTypes: ['gc'] });
  }
  setters.push(set);
}

/** Whether the process was started with a flag matching `flag` (command line or NODE_OPTIONS). */
export function startedWith(flag: RegExp, execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((a) => flag.test(a)) || flag.test(nodeOptions ?? '');
}
