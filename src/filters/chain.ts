/**
 * The filter chain of the authenticated listeners, in request order. Each filter only sets
 * fields of the request (user, pre-read body) or rejects it; none knows about storage.
 */
import type { Exchange } from '../server/http.js';
import type { BodyReader, RequestHeaders } from '../handlers/context.js';
import type { Credentials, UserInfo } from '../auth/types.js';
import { withAuthentication, type AuthenticationDeps } from './authentication.js';
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
}

export type FilterHandler = (r: FilterRequest) => void;

export function buildChain(handler: FilterHandler, deps: { authentication: AuthenticationDeps; impersonation: ImpersonationDeps }): FilterHandler {
  let h = handler;
  // authorization (RBAC issue) goes here, between impersonation and the handler
  h = withImpersonation(h, deps.impersonation);
  h = withAuthentication(h, deps.authentication);
  return h;
}
