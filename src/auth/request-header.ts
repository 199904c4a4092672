/**
 * Authenticating proxy (`--requestheader-*`): the user comes from request headers, trusted only
 * on a connection whose client certificate chains to `--requestheader-client-ca-file` (and whose
 * CN is in `--requestheader-allowed-names` when that is set). The TLS front decides that per
 * connection (tls-terminator.ts) and says so in the identity it relays; the headers are read on
 * the uWS thread only for such connections, so other requests pay nothing.
 * Header rules are upstream's (x509request / headerrequest): the first username header with a
 * non-empty value; every non-empty value of every group header; headers starting with an extra
 * prefix become extra entries (prefix stripped, lower-cased, percent-decoded key).
 */
import type { HttpRequest } from 'uWebSockets.js';
import { NOT_MINE, type AuthResult, type Authenticator, type UserInfo } from '../api/user.js';

export interface RequestHeaderConfig {
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** Upstream unescapeExtraKey: percent-decoded, the raw key when that fails. */
function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

/** The user the headers name (undefined when no username header has a value). */
export function userFromHeaders(headers: readonly [string, string][], cfg: RequestHeaderConfig): UserInfo | undefined {
  let username = '';
  for (const name of cfg.usernameHeaders) {
    const n = name.toLowerCase();
    const hit = headers.find(([k, v]) => k === n && v !== '');
    if (hit) {
      username = hit[1];
      break;
    }
  }
  if (username === '') return undefined;
  const groups: string[] = [];
  for (const name of cfg.groupHeaders) {
    const n = name.toLowerCase();
    for (const [k, v] of headers) if (k === n && v !== '') groups.push(v);
  }
  const extra: Record<string, string[]> = {};
  for (const prefix of cfg.extraHeaderPrefixes) {
    const p = prefix.toLowerCase();
    for (const [k, v] of headers) {
      if (!k.startsWith(p) || k.length === p.length) continue;
      (extra[unescapeKey(k.slice(p.length))] ??= []).push(v);
    }
  }
  const user: UserInfo = { username, groups };
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}

/** All request headers as uWS sees them (lower-case names, repeated headers kept). */
export function allHeaders(req: HttpRequest): [string, string][] {
  const out: [string, string][] = [];
  req.forEach((k, v) => {
    out.push([k, v]);
  });
  return out;
}

/** First in the request authenticators, as upstream: the proxy's answer, else not mine. */
export function requestHeaderAuthenticator(): Authenticator {
  return {
    authenticate(c): AuthResult {
      const p = c.proxy;
      if (!p) return NOT_MINE;
      if (!p.ok) return { kind: 'error', reason: p.reason };
      return p.user ? { kind: 'user', user: p.user } : NOT_MINE;
    },
  };
}
