/**
 * The CEL environment of CRD validation rules (upstream apiextensions v1.32): the standard
 * library, the strings extension, and the Kubernetes libraries (lists, sets, regex, urls,
 * quantity, ip, cidr). Every function call is metered: each call adds its cost to the running
 * meter (strings and lists by their size, as upstream's cost model charges traversals), and a
 * call that takes the meter past its limit throws, which ends the evaluation at once.
 *
 * This module keeps the meter and its limits (cheap to load: CRD rule evaluation imports them);
 * the environments themselves are in ./envs.ts, loaded with the CEL runtime (./lazy.ts).
 */
/** upstream's per-call limit (apiserver/pkg/apis/cel PerCallLimit) */
export const PER_CALL_LIMIT = 1_000_000;
/** the thrown message when the limit is passed, as cel-go words it */
export const COST_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

/** The running cost of the evaluation in progress (evaluation is synchronous: one at a time per thread). */
export const meter = { used: 0, limit: PER_CALL_LIMIT };

export class CostExceeded extends Error {
  constructor() {
    super(COST_EXCEEDED);
  }
}
