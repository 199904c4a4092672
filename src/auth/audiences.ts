/**
 * Audience rules (upstream authenticator.Audiences): an audience-agnostic authenticator (static
 * tokens) is valid for the API audiences only, so a caller asking for other audiences (a
 * TokenReview's spec.audiences) gets the intersection, or not-mine when it is empty.
 */
import { NOT_MINE, type AuthResult, type TokenAuthenticator } from '../api/user.js';

export function intersect(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((x) => b.includes(x));
}

export function audienceAgnostic(implicit: readonly string[], delegate: TokenAuthenticator): TokenAuthenticator {
  return {
    authenticateToken(token, audiences) {
      // the request path passes the API audiences themselves: nothing to intersect
      if (audiences.length === 0 || audiences === implicit) return delegate.authenticateToken(token, audiences);
      const auds = intersect(implicit, audiences);
      if (auds.length === 0) return NOT_MINE;
      const r = delegate.authenticateToken(token, audiences);
      return r instanceof Promise ? r.then((x) => withAudiences(x, auds)) : withAudiences(r, auds);
    },
  };
}

function withAudiences(r: AuthResult, audiences: string[]): AuthResult {
  return r.kind === 'user' ? { ...r, audiences } : r;
}
