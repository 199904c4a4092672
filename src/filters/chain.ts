/**
 * The filter chain of the authenticated listeners, in request order. Each filter only sets
 * fields of the request (user, pre-read body) or rejects it; none knows about storage.
 */
import type { Exchange } from '../http/exchange.js';
import type { BodyReader, RequestHeaders } from '../http/context.js';
import type { Credentials, UserInfo } from '../api/user.js';
import type { RequestInfo } from '../http/request-info.js';
import { withAuthentication, type AuthenticationDeps } from './authentication.js';
import { withAuthorization, type AuthorizationDeps } from './authorization.js';
import { withAudit, type AuditDeps } from './audit.js';
import { withImpersonation, type ImpersonationDeps, type ImpersonationRequest } from './impersonation.js';

export interface FilterRequest {
  x: Exchange;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: RequestHeaders;
  /** read synchronously from the headers by the listener */
  credentials: Credentials;
  impersonation: ImpersonationRequest | undefined;
  /** set by authentication (then replaced by impersonation) */
  user: UserInfo | undefined;
  /** set when a filter had to wait and started buffering the body */
  body: BodyReader | undefined;
  /** parsed once by the first filter that needs it (authorization), reused by the handler */
  info?: RequestInfo;
  /** read by the listener when auditing is on (uWS request data dies with the handler call) */
  remoteAddress?: string;
  auditIdHeader?: string;
}

export type FilterHandler = (r: FilterRequest) => void;

/** Request order (upstream's): authentication → audit → impersonation → authorization → handler. */
export function buildChain(handler: FilterHandler, deps: { authentication: AuthenticationDeps; audit?: AuditDeps; impersonation: ImpersonationDeps; authorization: AuthorizationDeps }): FilterHandler {
  let h = handler;
  h = withAuthorization(h, deps.authorization);
  h = withImpersonation(h, deps.impersonation);
  if (deps.audit) h = withAudit(h, deps.audit);
  h = withAuthentication(h, deps.authentication);
  return h;
}
