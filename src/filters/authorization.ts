/**
 * Authorization filter: builds the request's Attributes (RequestInfo + the user after
 * impersonation) and asks the authorizer chain; anything but allow is upstream's 403
 * Forbidden. It parses RequestInfo once and leaves it on the request for the handler.
 */
import type { Status } from '../api/status.js';
import { sendStatus } from '../server/http.js';
import { parseRequestInfo } from '../server/request-info.js';
import { attributesFor, forbiddenStatus } from '../auth/authz/attributes.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import { mayHaveBody, preReadBody } from './body.js';
import type { FilterHandler, FilterRequest } from './chain.js';

export interface AuthorizationDeps {
  authorizer: Authorizer;
  maxRequestBodyBytes: number;
}

export function withAuthorization(next: FilterHandler, deps: AuthorizationDeps): FilterHandler {
  return (r) => {
    const info = (r.info ??= parseRequestInfo(r.method, r.path, r.query));
    const a = attributesFor(info, r.user!, r.query);
    const d = deps.authorizer.authorize(a);
    r.x.audit?.authorized(d.decision === 'allow', d.reason);
    if (d.decision === 'allow') return next(r);
    reject(r, forbiddenStatus(a, d.reason), deps.maxRequestBodyBytes);
  };
}

/**
 * Answers after reading (and dropping) a body within the limit: uWS resets a connection
 * answered before its body arrived, and the client would lose the 403.
 */
function reject(r: FilterRequest, status: Status, limit: number): void {
  if (mayHaveBody(r.method) && r.headers.contentLength > 0) {
    const read = r.body ?? preReadBody(r.x, limit, r.headers.contentLength);
    const send = () => sendStatus(r.x, status);
    return read(send, send);
  }
  sendStatus(r.x, status);
}
