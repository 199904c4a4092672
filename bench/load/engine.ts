/**
 * Load loops every scenario uses, all bounded by time (the scenario's deadline or Ctrl-C,
 * through an AbortSignal) and by count: a closed loop (N workers, each sending its next
 * request when the previous one is answered) and an open loop (requests due on a fixed
 * clock whatever the answers do, latency counted from when each was due, so a slow server
 * cannot hide its queueing: no coordinated omission).
 */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });

export interface ClosedLoop {
  concurrency: number;
  maxRequests: number;
  signal: AbortSignal;
  /** one request (or one logical step) of worker w, the i-th overall */
  step(w: number, i: number): Promise<unknown>;
}

/** Runs until the signal aborts or maxRequests steps were started; returns the steps done. */
export async function closedLoop(o: ClosedLoop): Promise<number> {
  let next = 0;
  const worker = async (w: number): Promise<void> => {
    while (!o.signal.aborted && next < o.maxRequests) await o.step(w, next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency) }, (_, w) => worker(w)));
  return next;
}

export interface OpenLoop {
  qps: number;
  maxRequests: number;
  /** at most this many in flight: later requests wait (their latency still counts from when they were due) */
  maxInFlight: number;
  signal: AbortSignal;
  step(i: number, scheduledAt: number): Promise<unknown>;
}

/**
 * Resolves at or after `due` (performance.now() clock), never before: timers have millisecond
 * granularity and may fire a little early against this clock, so whole milliseconds are slept
 * and the rest is waited in event-loop turns, checking the clock each time.
 */
export async function untilDue(due: number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    const wait = due - performance.now();
    if (wait <= 0 || signal?.aborted) return;
    if (wait >= 2) await sleep(Math.floor(wait) - 1, signal);
    else await new Promise<void>((r) => setImmediate(r));
  }
}

export interface OpenLoopResult {
  sent: number /** how far behind schedule the last send was, ms */;
  lagMs: number;
}

export async function openLoop(o: OpenLoop): Promise<OpenLoopResult> {
  const t0 = performance.now();
  const interval = 1000 / o.qps;
  const inflight = new Set<Promise<unknown>>();
  let i = 0;
  let lagMs = 0;
  while (!o.signal.aborted && i < o.maxRequests) {
    const due = t0 + i * interval;
    await untilDue(due, o.signal);
    if (o.signal.aborted) break;
    while (inflight.size >= o.maxInFlight && !o.signal.aborted) await Promise.race(inflight);
    lagMs = Math.max(0, performance.now() - due);
    const p: Promise<unknown> = o.step(i, due).finally(() => inflight.delete(p));
    inflight.add(p);
    i++;
  }
  await Promise.all(inflight);
  return { sent: i, lagMs };
}

/** Runs fn(0..n-1) with at most `concurrency` in flight, stopping early when the signal aborts. */
export async function parallel(
  n: number,
  concurrency: number,
  signal: AbortSignal,
  fn: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n && !signal.aborted) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, n)) }, worker));
  return next;
}

/** An AbortSignal that fires after ms or when the parent fires, whichever is first. */
export function deadline(parent: AbortSignal, ms: number): { signal: AbortSignal; cancel(): void } {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), ms);
  const onParent = (): void => c.abort();
  if (parent.aborted) c.abort();
  else parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: c.signal,
    cancel: () => {
      clearTimeout(t);
      parent.removeEventListener('abort', onParent);
    },
  };
}
