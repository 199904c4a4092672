/**
 * Audit filter: once the request is authenticated, the audit policy decides its level and the
 * RequestReceived event is written; the record then rides on the exchange (later stages are
 * written by the response path, annotations by authorization and deprecation).
 */
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';

export interface AuditDeps {
  /** starts the request's audit record (sets r.x.audit when the policy selects the request) */
  begin(r: FilterRequest): void;
}

export function withAudit(next: FilterHandler, deps: AuditDeps): FilterHandler {
  return (r) => {
    deps.begin(r);
    next(r);
  };
}
