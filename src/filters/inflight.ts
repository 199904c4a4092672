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

  constructor(private readonly maxReadOnly: number, private readonly maxMutating: number) {}

  get current(): { readOnly: number; mutating: number } {
    return { readOnly: this.readOnly, mutating: this.mutating };
  }

  /** Admits the request or throws 429; the returned function releases the slot once. */
  admit(verb: string): () => void {
    if (verb === 'watch') return () => {};
    const isMutating = MUTATING.has(verb);
    const limit = isMutating ? this.maxMutating : this.maxReadOnly;
    if (limit > 0 && (isMutating ? this.mutating : this.readOnly) >= limit) {
      throw errors.tooManyRequests('Too many requests, please try again later.', 1);
    }
    if (isMutating) this.mutating++; else this.readOnly++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (isMutating) this.mutating--; else this.readOnly--;
    };
  }
}
