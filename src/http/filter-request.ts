/**
 * The request as the front's filters see it (src/server/handler-chain.ts lists them in order):
 * what the listener read synchronously from uWS, then what each filter adds (user, pre-read
 * body, parsed RequestInfo).
 */
import type { Exchange } from './exchange.js';
import type { BodyReader, RequestHeaders } from './context.js';
import type { Credentials, UserInfo } from '../api/user.js';
import type { RequestInfo } from './request-info.js';

/** The Impersonate-* headers, read by the listener (src/filters/impersonation.ts checks them). */
export interface ImpersonationRequest {
  user: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

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
