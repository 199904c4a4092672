/**
 * A Prometheus histogram's state for one label set: observations per bucket (not cumulative,
 * the last slot is +Inf), their sum and count. Observing is a short scan of the bounds; the
 * `le` label text is built once per bounds list, the cumulative lines only at scrape time.
 */
const LE_LABELS = new WeakMap<readonly number[], string[]>();

export class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }

  /** Appends the `_bucket` lines (cumulative, then +Inf), `_sum` and `_count` of `name{labels}`. */
  lines(name: string, labels: string, out: string[]): void {
    let le = LE_LABELS.get(this.bounds);
    if (!le) LE_LABELS.set(this.bounds, (le = this.bounds.map((b) => `le="${b}"`)));
    let cum = 0;
    for (let i = 0; i < le.length; i++) {
      cum += this.counts[i]!;
      out.push(`${name}_bucket{${labels},${le[i]}} ${cum}`);
    }
    out.push(
      `${name}_bucket{${labels},le="+Inf"} ${this.count}`,
      `${name}_sum{${labels}} ${this.sum}`,
      `${name}_count{${labels}} ${this.count}`,
    );
  }
}
