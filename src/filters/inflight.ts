/**
 * Max-in-flight limits (upstream --max-requests-inflight / --max-mutating-requests-inflight):
 * past the limit a request is refused with 429 and Retry-After; long-running requests
 * (watch) are not counted. A limit of 0 disables it.
 */
import { errors } from '../api/status.js';

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export class InflightLimiter {
  private readOnly = 0;
  private mutating = 0;
  /** highest counts since the last watermark() call (one comparison per admitted request) */
  private peakReadOnly = 0;
  private peakMutating = 0;

  constructor(
    private readonly maxReadOnly: number,
    private readonly maxMutating: number,
  ) {}

  get current(): { readOnly: number; mutating: number } {
    return { readOnly: this.readOnly, mutating: this.mutating };
  }

  /** The highest in-flight counts since the previous call (upstream's watermark gauge), then restarts. */
  watermark(): { readOnly: number; mutating: number } {
    const w = {
      readOnly: Math.max(this.peakReadOnly, this.readOnly),
      mutating: Math.max(this.peakMutating, this.mutating),
    };
    this.peakReadOnly = this.readOnly;
    this.peakMutating = this.mutating;
    return w;
  }

  /** Admits the request or throws 429; the returned function releases the slot once. */
  admit(verb: string): () => void {
    if (verb === 'watch') return () => {};
    const isMutating = MUTATING.has(verb);
    const limit = isMutating ? this.maxMutating : this.maxReadOnly;
    if (limit > 0 && (isMutating ? this.mutating : this.readOnly) >= limit) {
      throw errors.tooManyRequests('Too many requests, please try again later.', 1);
    }
    if (isMutating) {
      if (++this.mutating > this.peakMutating) this.peakMutating = this.mutating;
    } else if (++this.readOnly > this.peakReadOnly) this.peakReadOnly = this.readOnly;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (isMutating) this.mutating--;
      else this.readOnly--;
    };
  }
}
