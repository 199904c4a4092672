/**
 * Service account tokens: JWTs issued by the TokenRequest subresource (signed with
 * `--service-account-signing-key-file`) and verified with `jose` against the
 * `--service-account-key-file` keys. User `system:serviceaccount:<ns>:<name>`, groups
 * `system:serviceaccounts` and `system:serviceaccounts:<ns>`.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import {
  NOT_MINE,
  SA_PREFIX,
  type AuthResult,
  type MaybeAsync,
  type TokenAuthenticator,
  type UserInfo,
} from '../api/user.js';
import { intersect } from './audiences.js';
import type { SigningKey, VerifyKey } from './sa-keys.js';

/** The object a token is bound to (TokenRequest spec.boundObjectRef): deleting it revokes the token. */
import type { BoundObject, ServiceAccountRef, TokenIssuer } from '../api/user.js';
export type { BoundObject, ServiceAccountRef };

/** What lookups need of a stored object. */
export interface StoredObject {
  uid: string;
  deletionTimestamp?: string;
}
export type ObjectLookup = (
  resource: 'serviceaccounts' | 'pods' | 'secrets',
  namespace: string,
  name: string,
) => Promise<StoredObject | undefined>;

const BOUND_CLAIM = { Pod: 'pod', Secret: 'secret' } as const;

export interface ServiceAccountConfig {
  /** accepted issuers; the first one is written into issued tokens */
  issuers: readonly string[];
  signingKey?: SigningKey;
  verifyKeys: readonly VerifyKey[];
  /** the product domain (`kubernetes.io` as upstream, `platform.io`): names the private claim and the extra keys */
  domain: string;
  /** API audiences: the default audiences of issued tokens and of the request path */
  apiAudiences: readonly string[];
  /**
   * `--service-account-lookup`: the account, and the pod or secret a token is bound to, must
   * still exist with the same uid and not be past their deletion timestamp
   */
  lookup?: ObjectLookup;
  now?: () => number;
  /** how long a verified token is answered from memory (revocation delay), default 10s */
  cacheTtlMs?: number;
}

/** The user of a service account (upstream serviceaccount.UserInfo). */
export function serviceAccountUser(
  namespace: string,
  name: string,
  uid?: string,
  extra?: Record<string, string[]>,
): UserInfo {
  const u: UserInfo = {
    username: `${SA_PREFIX}${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
  if (uid) u.uid = uid;
  if (extra) u.extra = extra;
  return u;
}

interface Cached {
  payload: JWTPayload;
  user: UserInfo;
  forApi: AuthResult;
  until: number;
}

export class ServiceAccountTokens implements TokenIssuer {
  private readonly now: () => number;
  private readonly cache = new Map<string, Cached>();
  private readonly algorithms: string[];

  constructor(private readonly cfg: ServiceAccountConfig) {
    this.now = cfg.now ?? Date.now;
    this.algorithms = [...new Set(cfg.verifyKeys.map((k) => k.alg))];
  }

  get canIssue(): boolean {
    return this.cfg.signingKey !== undefined && this.cfg.issuers.length > 0;
  }

  /** Signs a bound, expiring token for the account. */
  async issue(
    sa: ServiceAccountRef,
    audiences: readonly string[],
    expirationSeconds: number,
  ): Promise<{ token: string; expiresAt: Date }> {
    const key = this.cfg.signingKey;
    if (!key) throw new Error('no service account signing key configured');
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + expirationSeconds;
    const claim: Record<string, unknown> = { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } };
    if (sa.bound) claim[BOUND_CLAIM[sa.bound.kind]] = { name: sa.bound.name, uid: sa.bound.uid };
    const token = await new SignJWT({ [this.cfg.domain]: claim })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuer(this.cfg.issuers[0]!)
      .setSubject(`${SA_PREFIX}${sa.namespace}:${sa.name}`)
      .setAudience([...audiences])
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(key.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** Token authenticator: not mine unless the token is a JWT from one of our issuers. */
  authenticator(): TokenAuthenticator {
    return { authenticateToken: (token, audiences) => this.authenticate(token, audiences) };
  }

  private authenticate(token: string, audiences: readonly string[]): MaybeAsync<AuthResult> {
    const hit = this.cache.get(token);
    if (hit && hit.until > this.now()) return this.forAudiences(hit, audiences);
    let payload: JWTPayload;
    try {
      payload = decodeJwt(token);
    } catch {
      return NOT_MINE;
    }
    if (typeof payload.iss !== 'string' || !this.cfg.issuers.includes(payload.iss)) return NOT_MINE;
    return this.verify(token).then((c) => (c.kind === 'cached' ? this.forAudiences(c.entry, audiences) : c.result));
  }

  private forAudiences(c: Cached, audiences: readonly string[]): AuthResult {
    if (audiences === this.cfg.apiAudiences) return c.forApi;
    return audienceResult(c.payload, c.user, audiences);
  }

  private async verify(
    token: string,
  ): Promise<{ kind: 'cached'; entry: Cached } | { kind: 'error'; result: AuthResult }> {
    const fail = (reason: string) => ({ kind: 'error' as const, result: { kind: 'error' as const, reason } });
    let payload: JWTPayload;
    try {
      payload = await this.verifySignature(token);
    } catch (e) {
      return fail(`service account token is invalid: ${(e as Error).message}`);
    }
    type Ref = { name?: string; uid?: string };
    const claim = payload[this.cfg.domain] as
      | { namespace?: string; serviceaccount?: Ref; pod?: Ref; secret?: Ref }
      | undefined;
    const ns = claim?.namespace,
      name = claim?.serviceaccount?.name,
      uid = claim?.serviceaccount?.uid;
    if (!ns || !name || payload.sub !== `${SA_PREFIX}${ns}:${name}`)
      return fail('service account token has malformed claims');
    if (this.cfg.lookup) {
      const why =
        (await this.revoked(ns, 'serviceaccounts', claim!.serviceaccount!)) ??
        (claim!.pod ? await this.revoked(ns, 'pods', claim!.pod) : undefined) ??
        (claim!.secret ? await this.revoked(ns, 'secrets', claim!.secret) : undefined);
      if (why) return fail(why);
    }
    const domain = this.cfg.domain;
    const extra: Record<string, string[]> = {};
    if (claim!.pod?.name) {
      extra[`authentication.${domain}/pod-name`] = [claim!.pod.name];
      if (claim!.pod.uid) extra[`authentication.${domain}/pod-uid`] = [claim!.pod.uid];
    }
    if (payload.jti) extra[`authentication.${domain}/credential-id`] = [`JTI=${payload.jti}`];
    const user = serviceAccountUser(ns, name, uid, Object.keys(extra).length ? extra : undefined);
    const entry: Cached = {
      payload,
      user,
      forApi: audienceResult(payload, user, this.cfg.apiAudiences),
      until: Math.min(this.now() + (this.cfg.cacheTtlMs ?? 10_000), (payload.exp ?? 0) * 1000),
    };
    if (this.cache.size >= 4096) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(token, entry);
    return { kind: 'cached', entry };
  }

  /** Why a token naming this object is no longer valid, or undefined when the object still backs it. */
  private async revoked(
    namespace: string,
    resource: 'serviceaccounts' | 'pods' | 'secrets',
    ref: { name?: string; uid?: string },
  ): Promise<string | undefined> {
    if (!ref.name) return `service account token has a malformed ${resource} claim`;
    const stored = await this.cfg.lookup!(resource, namespace, ref.name);
    if (!stored) return `${resource} ${namespace}/${ref.name} has been deleted`;
    if (ref.uid && stored.uid !== ref.uid)
      return `${resource} ${namespace}/${ref.name}: UID (${stored.uid}) does not match claim (${ref.uid})`;
    if (stored.deletionTimestamp && Date.parse(stored.deletionTimestamp) <= this.now())
      return `${resource} ${namespace}/${ref.name} is being deleted`;
    return undefined;
  }

  /** Verifies with the key named by `kid`, or each key in turn when the token names none. */
  private async verifySignature(token: string): Promise<JWTPayload> {
    const { kid } = decodeProtectedHeader(token);
    const keys = kid ? this.cfg.verifyKeys.filter((k) => k.kid === kid) : this.cfg.verifyKeys;
    if (keys.length === 0) throw new Error('no key matches the token key id');
    let last: unknown;
    for (const k of keys) {
      try {
        const { payload } = await jwtVerify(token, k.key, {
          issuer: [...this.cfg.issuers],
          algorithms: this.algorithms,
          currentDate: new Date(this.now()),
        });
        return payload;
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }
}

/** Audience-aware answer: the token's audiences intersected with the accepted ones. */
function audienceResult(payload: JWTPayload, user: UserInfo, audiences: readonly string[]): AuthResult {
  const tokenAuds = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  const auds = audiences.length === 0 ? tokenAuds : intersect(tokenAuds, audiences);
  if (auds.length === 0)
    return {
      kind: 'error',
      reason: `token audiences ${JSON.stringify(tokenAuds)} is invalid for the target audiences ${JSON.stringify(audiences)}`,
    };
  return { kind: 'user', user, audiences: auds };
}
