/**
 * An HDR-style latency histogram: log-linear buckets over microseconds (exact below 128 µs,
 * then 64 sub-buckets per power of two, so any recorded value is off by at most 1/64 ≈ 1.6 %),
 * fixed size (2,048 buckets reach ~19 h), mergeable, and serialised sparse.
 */
const SUB_BITS = 6;
const SUB = 1 << SUB_BITS; // 64
const LINEAR = SUB * 2; // values below 128 µs have their own bucket
export const BUCKETS = 2048;

export function bucketOf(us: number): number {
  const v = Math.max(0, Math.floor(us));
  if (v < LINEAR) return v;
  const e = v < 2 ** 31 ? 31 - Math.clz32(v) : Math.floor(Math.log2(v));
  const shift = e - SUB_BITS;
  const m = Math.floor(v / 2 ** shift); // in SUB..2*SUB-1
  return Math.min(BUCKETS - 1, LINEAR + (e - SUB_BITS - 1) * SUB + (m - SUB));
}

/** The largest value (µs) that lands in bucket i. */
export function upperOf(i: number): number {
  if (i < LINEAR) return i;
  const k = i - LINEAR;
  const e = Math.floor(k / SUB) + SUB_BITS + 1;
  const m = (k % SUB) + SUB;
  return (m + 1) * 2 ** (e - SUB_BITS) - 1;
}

export class Hdr {
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  sumUs = 0;
  maxUs = 0;
  minUs = Infinity;

  recordMs(ms: number): void {
    const us = ms * 1000;
    this.counts[bucketOf(us)]! += 1;
    this.count++;
    this.sumUs += us;
    if (us > this.maxUs) this.maxUs = us;
    if (us < this.minUs) this.minUs = us;
  }

  merge(o: Hdr): void {
    for (let i = 0; i < BUCKETS; i++) if (o.counts[i]) this.counts[i]! += o.counts[i]!;
    this.count += o.count;
    this.sumUs += o.sumUs;
    this.maxUs = Math.max(this.maxUs, o.maxUs);
    this.minUs = Math.min(this.minUs, o.minUs);
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sumUs = 0;
    this.maxUs = 0;
    this.minUs = Infinity;
  }

  /** p-th percentile in ms (the bucket's upper edge, capped at the largest value seen). */
  percentileMs(p: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(upperOf(i), this.maxUs) / 1000;
    }
    return this.maxUs / 1000;
  }

  meanMs(): number {
    return this.count ? this.sumUs / this.count / 1000 : NaN;
  }

  /** Non-empty buckets as [upper edge µs, count]. */
  sparse(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]) out.push([upperOf(i), this.counts[i]!]);
    return out;
  }

  static fromSparse(pairs: [number, number][]): Hdr {
    const h = new Hdr();
    for (const [us, c] of pairs) {
      h.counts[bucketOf(us)]! += c;
      h.count += c;
      h.maxUs = Math.max(h.maxUs, us);
      h.minUs = Math.min(h.minUs, us);
      h.sumUs += us * c;
    }
    return h;
  }
}
