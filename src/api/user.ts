/**
 * Shapes of authentication and of the authorizer contract: who made a request (UserInfo), what
 * an authenticator may answer (user / not mine / error), and what an authorizer decides.
 */

/** The identity attached to every request before authorization runs (upstream user.Info). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  /** never secret data: it may be logged, stored in objects or sent to webhooks */
  extra?: Record<string, string[]>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';
/** usernames of service accounts: `system:serviceaccount:<namespace>:<name>` */
export const SA_PREFIX = 'system:serviceaccount:';

/**
 * Tri-state answer of an authenticator:
 * - `user`: the credential is valid and names this user (audiences it is valid for, when known);
 * - `notMine`: no credential this authenticator understands was presented;
 * - `error`: a credential it understands was presented and is invalid. `reason` is for logs
 *   and TokenReview status.error; it never contains the credential itself.
 */
export type AuthResult =
  | { kind: 'user'; user: UserInfo; audiences?: string[] }
  | { kind: 'notMine' }
  | { kind: 'error'; reason: string };

export const NOT_MINE: AuthResult = Object.freeze({ kind: 'notMine' });

/** Synchronous when the answer is at hand (static tokens, certificates): the hot path allocates no promise. */
export type MaybeAsync<T> = T | Promise<T>;

/**
 * A client certificate as the TLS front (src/auth/tls-terminator.ts) judged it: `verified`
 * against `--client-ca-file`; `proxy` (only with `--requestheader-client-ca-file`): whether the
 * connection is a trusted authenticating proxy.
 */
export type ClientCertificate =
  | { verified: true; user: UserInfo; proxy?: ProxyVerdict }
  | { verified: false; reason: string; proxy?: ProxyVerdict };

export type ProxyVerdict = { ok: true } | { ok: false; reason: string };

/** Everything authentication reads from a request, taken synchronously from the headers. */
export interface Credentials {
  /** the Authorization header, '' when absent */
  authorization: string;
  /** the client certificate presented on the TLS connection, undefined when none */
  clientCertificate?: ClientCertificate;
  /** authenticating proxy: the verdict on its certificate and, when trusted, the user its headers name */
  proxy?: { ok: true; user?: UserInfo } | { ok: false; reason: string };
  /** the client's address as the TLS front saw it (the uWS connection is a local socket then) */
  remoteAddress?: string;
}

/** Authenticates a whole request (certificate, bearer header, ...). */
export interface Authenticator {
  /** Called once per request on the front thread; must not throw (errors are results). */
  authenticate(c: Credentials): MaybeAsync<AuthResult>;
}

/**
 * Authenticates a bearer token (static file, service account JWT, ...). `audiences` are the
 * audiences the caller accepts (the API audiences, or a TokenReview's spec.audiences); an
 * audience-aware authenticator answers the intersection, or `notMine`/`error` when empty.
 */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: readonly string[]): MaybeAsync<AuthResult>;
}

/** Authorization request attributes (the subset the impersonation check needs so far). */
export interface Attributes {
  user: UserInfo;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** Tri-state authorizer decision: the first allow or deny decides; no opinion from all is a deny. */
export type Decision = 'allow' | 'deny' | 'noOpinion';

export type Authorizer = (a: Attributes) => MaybeAsync<{ decision: Decision; reason?: string }>;

/** Runs results in order: the first user wins; otherwise the first error, else not mine. */
export function firstUser<T>(
  items: readonly T[],
  call: (t: T) => MaybeAsync<AuthResult>,
  from = 0,
  err?: string,
): MaybeAsync<AuthResult> {
  for (let i = from; i < items.length; i++) {
    const r = call(items[i]!);
    if (r instanceof Promise) {
      return r.then(
        (res) =>
          res.kind === 'user'
            ? res
            : firstUser(items, call, i + 1, err ?? (res.kind === 'error' ? res.reason : undefined)),
        (e) => firstUser(items, call, i + 1, err ?? `authenticator failed: ${(e as Error).message}`),
      );
    }
    if (r.kind === 'user') return r;
    if (r.kind === 'error') err ??= r.reason;
  }
  return err !== undefined ? { kind: 'error', reason: err } : NOT_MINE;
}

// the same authenticated user object (static token, certificate) maps to the same result
const withGroup = new WeakMap<UserInfo, UserInfo>();

/** Upstream AuthenticatedGroupAdder: every authenticated user is also in system:authenticated. */
export function addAuthenticatedGroup(u: UserInfo): UserInfo {
  let out = withGroup.get(u);
  if (out) return out;
  out =
    u.groups.includes(AUTHENTICATED_GROUP) || u.groups.includes(UNAUTHENTICATED_GROUP)
      ? u
      : { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
  withGroup.set(u, out);
  return out;
}

/** The object a service account token is bound to (TokenRequest's boundObjectRef). */
export interface BoundObject {
  kind: 'Pod' | 'Secret';
  name: string;
  uid: string;
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
  uid: string;
  bound?: BoundObject;
}

/** Issues service account tokens (src/auth/service-account.ts), as the TokenRequest subresource uses it. */
export interface TokenIssuer {
  /** a signing key and an issuer are configured */
  readonly canIssue: boolean;
  issue(
    sa: ServiceAccountRef,
    audiences: readonly string[],
    expirationSeconds: number,
  ): Promise<{ token: string; expiresAt: Date }>;
}
