/**
 * Bearer token transport: `Authorization: Bearer <token>`. A request without one is not ours;
 * a token that no token authenticator accepts is an error (401), never anonymous.
 */
import {
  NOT_MINE,
  firstUser,
  type AuthResult,
  type Authenticator,
  type MaybeAsync,
  type TokenAuthenticator,
} from '../api/user.js';

const INVALID: AuthResult = Object.freeze({ kind: 'error', reason: 'invalid bearer token' });

/** The token of an `Authorization: Bearer` header (upstream rules), or undefined. */
export function bearerToken(header: string): string | undefined {
  const h = header.trim();
  const sp = h.indexOf(' ');
  if (sp < 0 || h.slice(0, sp).toLowerCase() !== 'bearer') return undefined;
  const token = h.slice(sp + 1).split(' ', 1)[0]!;
  return token === '' ? undefined : token;
}

/** Tries each token authenticator in order (first user wins). */
export function unionTokenAuthenticator(list: readonly TokenAuthenticator[]): TokenAuthenticator {
  if (list.length === 1) return list[0]!;
  return { authenticateToken: (token, auds) => firstUser(list, (a) => a.authenticateToken(token, auds)) };
}

export function bearerAuthenticator(tokens: TokenAuthenticator, apiAudiences: readonly string[]): Authenticator {
  const invalidIfNotMine = (r: AuthResult): AuthResult => (r.kind === 'notMine' ? INVALID : r);
  return {
    authenticate(c): MaybeAsync<AuthResult> {
      if (c.authorization === '') return NOT_MINE;
      const token = bearerToken(c.authorization);
      if (token === undefined) return NOT_MINE;
      const r = tokens.authenticateToken(token, apiAudiences);
      return r instanceof Promise ? r.then(invalidIfNotMine) : invalidIfNotMine(r);
    },
  };
}
