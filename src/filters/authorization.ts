/**
 * Authorization filter: builds the request's Attributes (RequestInfo + the user after
 * impersonation) and asks the authorizer chain; anything but allow is upstream's 403
 * Forbidden. It parses RequestInfo once and leaves it on the request for the handler. A
 * synchronous decision continues in the same call; an asynchronous one (a webhook) pre-reads
 * the body first, as authentication does.
 */
import { errors, type Status } from '../api/status.js';
import { sendStatus } from '../http/exchange.js';
import { parseRequestInfo } from '../http/request-info.js';
import { attributesFor, forbiddenStatus, type Attributes } from '../auth/authz/attributes.js';
import type { Authorizer, AuthorizerResult } from '../auth/authz/authorizer.js';
import { mayHaveBody, preReadBody } from './body.js';
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';

export interface AuthorizationDeps {
  authorizer: Authorizer;
  maxRequestBodyBytes: number;
}

export function withAuthorization(next: FilterHandler, deps: AuthorizationDeps): FilterHandler {
  return (r) => {
    const info = (r.info ??= parseRequestInfo(r.method, r.path, r.query));
    const a = attributesFor(info, r.user!, r.query);
    const d = deps.authorizer.authorize(a);
    if (!(d instanceof Promise)) return decide(r, a, d);
    // a webhook call: uWS needs onData before this handler returns, so the body starts buffering now
    if (mayHaveBody(r.method)) r.body ??= preReadBody(r.x, deps.maxRequestBodyBytes, r.headers.contentLength);
    void d.then((res) => {
      if (!r.x.aborted) decide(r, a, res);
    });
  };

  /**
   * upstream WithAuthorization: an allow passes even with evaluation errors; otherwise an error
   * (a failing webhook, whatever its failure policy) is a 500, and a plain refusal the 403.
   */
  function decide(r: FilterRequest, a: Attributes, d: AuthorizerResult): void {
    r.x.audit?.authorized(d.decision === 'allow', d.reason);
    if (d.decision === 'allow') return next(r);
    const status = d.error ? internalError(r, d.error) : forbiddenStatus(a, d.reason);
    reject(r, status, deps.maxRequestBodyBytes);
  }
}

/**
 * upstream responsewriters.InternalError's text (`Internal Server Error: "<uri>": <err>`), sent
 * as a Status (every failure here answers with one) with code 500 and reason InternalError.
 */
function internalError(r: FilterRequest, err: string): Status {
  const q = r.query.toString();
  const message = `Internal Server Error: ${JSON.stringify(q ? `${r.path}?${q}` : r.path)}: ${err}`;
  return errors.internalAs(message).status;
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
