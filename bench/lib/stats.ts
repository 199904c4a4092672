/** Percentiles over samples, and a fixed-resolution latency histogram for large counts. */

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Latencies in 0.1 ms buckets up to `maxMs`; larger values land in the last bucket. */
export class Histogram {
  static readonly STEP_MS = 0.1;
  readonly counts: Uint32Array;
  total = 0;

  constructor(readonly maxMs = 60_000) {
    this.counts = new Uint32Array(Math.ceil(maxMs / Histogram.STEP_MS) + 1);
  }

  record(ms: number): void {
    const i = ms <= 0 ? 0 : Math.min(this.counts.length - 1, Math.floor(ms / Histogram.STEP_MS));
    this.counts[i]!++;
    this.total++;
  }

  /** Upper edge of the bucket holding the p-th percentile. */
  percentile(p: number): number {
    if (this.total === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.total);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return (i + 1) * Histogram.STEP_MS;
    }
    return this.maxMs;
  }

  /** Non-empty buckets as [index, count] pairs (compact for IPC). */
  sparse(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.counts.length; i++) if (this.counts[i]) out.push([i, this.counts[i]!]);
    return out;
  }

  mergeSparse(pairs: [number, number][]): void {
    for (const [i, c] of pairs) {
      this.counts[i]! += c;
      this.total += c;
    }
  }
}

/**
 * Microseconds of the system monotonic clock (CLOCK_MONOTONIC: comparable across processes): the
 * server's own clock for the watch trace's stamps (src/metrics/process-metrics.ts monoUs), so the
 * bench's `bench-ts` times and the server's stages are read off one clock.
 */
export { monoUs as nowUs } from '../../src/metrics/process-metrics.js';
