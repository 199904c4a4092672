/**
 * Authentication filter: asks the authenticator (tri-state), adds `system:authenticated` to
 * every authenticated user, falls back to `system:anonymous` only when no credential was
 * presented and anonymous access is on, and answers 401 otherwise. A synchronous answer
 * (static token, certificate) continues in the same call; an asynchronous one (JWT) first
 * starts buffering the body, because uWS needs `onData` before the handler returns.
 */
import { sendStatus } from '../http/exchange.js';
import {
  ANONYMOUS_USER,
  UNAUTHENTICATED_GROUP,
  addAuthenticatedGroup,
  type AuthResult,
  type Authenticator,
  type UserInfo,
} from '../api/user.js';
import { unauthorized } from '../auth/errors.js';
import { mayHaveBody, preReadBody } from './body.js';
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';

export interface AuthenticationDeps {
  authenticator: Authenticator;
  anonymous: boolean;
  /** when set, anonymous requests are allowed on these paths only (AuthenticationConfiguration anonymous.conditions) */
  anonymousPaths?: ReadonlySet<string>;
  maxRequestBodyBytes: number;
  /** failure reasons (never credentials), for the server log */
  onFailure?: (reason: string) => void;
}

export const ANONYMOUS: UserInfo = Object.freeze({
  username: ANONYMOUS_USER,
  groups: Object.freeze([UNAUTHENTICATED_GROUP]) as string[],
});

export function withAuthentication(next: FilterHandler, deps: AuthenticationDeps): FilterHandler {
  const finish = (r: FilterRequest, res: AuthResult): void => {
    if (r.x.aborted) return;
    if (res.kind === 'user') {
      r.user = addAuthenticatedGroup(res.user);
      return next(r);
    }
    if (res.kind === 'notMine' && deps.anonymous && (!deps.anonymousPaths || deps.anonymousPaths.has(r.path))) {
      r.user = ANONYMOUS;
      return next(r);
    }
    deps.onFailure?.(res.kind === 'error' ? res.reason : 'no credentials and anonymous access is disabled');
    // read (and drop) a body within the limit first: uWS resets a connection answered before
    // its body arrived, and the client would lose the 401 (Go servers drain it too)
    if (mayHaveBody(r.method) && r.headers.contentLength > 0) {
      const read = r.body ?? preReadBody(r.x, deps.maxRequestBodyBytes, r.headers.contentLength);
      const reject = () => sendStatus(r.x, unauthorized().status);
      return read(reject, reject);
    }
    sendStatus(r.x, unauthorized().status);
  };
  return (r) => {
    const res = deps.authenticator.authenticate(r.credentials);
    if (!(res instanceof Promise)) return finish(r, res);
    if (mayHaveBody(r.method)) r.body = preReadBody(r.x, deps.maxRequestBodyBytes, r.headers.contentLength);
    res.then(
      (out) => finish(r, out),
      (e) => finish(r, { kind: 'error', reason: `authenticator failed: ${(e as Error).message}` }),
    );
  };
}
