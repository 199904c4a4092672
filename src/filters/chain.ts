/**
 * The filter chain of the authenticated listeners, in request order. Each filter only sets
 * fields of the request (user, pre-read body) or rejects it; none knows about storage.
 */
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';
import { withAuthentication, type AuthenticationDeps } from './authentication.js';
import { withAuthorization, type AuthorizationDeps } from './authorization.js';
import { withAudit, type AuditDeps } from './audit.js';
import { withImpersonation, type ImpersonationDeps } from './impersonation.js';

export type { FilterHandler, FilterRequest };

/** Request order (upstream's): authentication → audit → impersonation → authorization → handler. */
export function buildChain(handler: FilterHandler, deps: { authentication: AuthenticationDeps; audit?: AuditDeps; impersonation: ImpersonationDeps; authorization: AuthorizationDeps }): FilterHandler {
  let h = handler;
  h = withAuthorization(h, deps.authorization);
  h = withImpersonation(h, deps.impersonation);
  if (deps.audit) h = withAudit(h, deps.audit);
  h = withAuthentication(h, deps.authentication);
  return h;
}
