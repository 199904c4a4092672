/**
 * One JWT authenticator (an `--oidc-*` issuer or a `jwt[]` entry of the authentication
 * configuration), following upstream's oidc authenticator: a token whose unverified `iss` is
 * not this issuer is not ours; otherwise signature (issuer's keys, allowed algorithms), `iss`,
 * `aud` (any configured audience), `exp` are verified, then claim validation rules, claim
 * mappings (claims or CEL), and user validation rules. Verified answers are kept for up to
 * 10 s (never past `exp`), as upstream's token cache, so a token in use answers synchronously.
 */
import { decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { NOT_MINE, type AuthResult, type MaybeAsync, type TokenAuthenticator, type UserInfo } from '../../api/user.js';
import { compile, type Program } from './cel.js';
import type { JwtAuthenticatorSpec } from './config.js';
import { RemoteKeys } from './remote-keys.js';

interface Compiled {
  validations: ({ claim: string; value: string } | { program: Program; expression: string; message?: string })[];
  username: { claim: string; prefix: string } | { program: Program };
  groups?: { claim: string; prefix: string } | { program: Program };
  uid?: { claim: string } | { program: Program };
  extra: { key: string; program: Program }[];
  userRules: { program: Program; expression: string; message?: string }[];
}

interface Cached {
  result: AuthResult;
  until: number;
}

const CACHE_TTL_MS = 10_000;
const MAX_CACHE = 10_000;

function mapping(
  m: { claim?: string; prefix?: string; expression?: string } | undefined,
): { claim: string; prefix: string } | { program: Program } | undefined {
  if (!m || (!m.claim && !m.expression)) return undefined;
  return m.expression ? { program: compile(m.expression) } : { claim: m.claim!, prefix: m.prefix ?? '' };
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export class JwtAuthenticator implements TokenAuthenticator {
  readonly issuer: string;
  readonly keys: RemoteKeys;
  private readonly c: Compiled;
  private readonly cache = new Map<string, Cached>();
  private readonly now: () => number;

  constructor(
    private readonly spec: JwtAuthenticatorSpec,
    private readonly algorithms: string[],
    opts: { now?: () => number; log?: (m: string) => void; keys?: RemoteKeys } = {},
  ) {
    this.issuer = spec.issuer.url;
    this.now = opts.now ?? Date.now;
    this.keys =
      opts.keys ??
      new RemoteKeys(
        spec.issuer.url,
        spec.issuer.discoveryURL || undefined,
        spec.issuer.certificateAuthority || undefined,
        { log: opts.log },
      );
    const cm = spec.claimMappings;
    this.c = {
      validations: (spec.claimValidationRules ?? []).map((r) =>
        r.claim
          ? { claim: r.claim, value: r.requiredValue ?? '' }
          : { program: compile(r.expression!), expression: r.expression!, message: r.message },
      ),
      username: mapping(cm.username)!,
      groups: mapping(cm.groups),
      uid:
        cm.uid && (cm.uid.claim || cm.uid.expression)
          ? cm.uid.expression
            ? { program: compile(cm.uid.expression) }
            : { claim: cm.uid.claim! }
          : undefined,
      extra: (cm.extra ?? []).map((x) => ({ key: x.key, program: compile(x.valueExpression) })),
      userRules: (spec.userValidationRules ?? []).map((r) => ({
        program: compile(r.expression),
        expression: r.expression,
        message: r.message,
      })),
    };
  }

  authenticateToken(token: string): MaybeAsync<AuthResult> {
    // a token in use is answered from memory before any decoding (as service account tokens)
    const hit = this.cache.get(token);
    if (hit) {
      if (hit.until > this.now()) return hit.result;
      this.cache.delete(token);
    }
    // then cheap: a token of another issuer (or not a JWT) is not ours
    let payload: JWTPayload;
    try {
      payload = decodeJwt(token);
    } catch {
      return NOT_MINE;
    }
    if (payload.iss !== this.issuer) return NOT_MINE;
    return this.verify(token).then((result) => {
      if (result.kind === 'user') {
        if (this.cache.size >= MAX_CACHE) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(token, { result, until: Math.min(this.now() + CACHE_TTL_MS, (payload.exp ?? 0) * 1000) });
      }
      return result;
    });
  }

  stop(): void {
    this.keys.stop();
  }

  private async verify(token: string): Promise<AuthResult> {
    let claims: JWTPayload;
    try {
      const r = await jwtVerify(token, this.keys.keyFor, {
        issuer: this.issuer,
        audience: this.spec.issuer.audiences,
        algorithms: this.algorithms,
        requiredClaims: ['exp'],
        currentDate: new Date(this.now()),
      });
      claims = r.payload;
    } catch (e) {
      return { kind: 'error', reason: `oidc: verify token: ${(e as Error).message}` };
    }
    try {
      return { kind: 'user', user: this.userFrom(claims as Record<string, unknown>) };
    } catch (e) {
      return { kind: 'error', reason: (e as Error).message };
    }
  }

  /** Claims → user, or throws the reason (upstream's messages). */
  userFrom(claims: Record<string, unknown>): UserInfo {
    const vars = { claims };
    for (const v of this.c.validations) {
      if ('claim' in v) {
        if (!(v.claim in claims)) throw new Error(`oidc: required claim ${v.claim} not present in ID token`);
        if (claims[v.claim] !== v.value)
          throw new Error(
            `oidc: required claim ${v.claim} value does not match. Got = ${JSON.stringify(claims[v.claim])}, want = ${v.value}`,
          );
      } else {
        const ok = evaluate(v.program, vars, `claim validation expression ${JSON.stringify(v.expression)}`);
        if (ok !== true)
          throw new Error(
            v.message ??
              `oidc: error evaluating claim validation expression: expression ${JSON.stringify(v.expression)} resulted in error`,
          );
      }
    }
    const user: UserInfo = { username: this.username(claims), groups: this.groups(claims) };
    if (this.c.uid) {
      const uid =
        'claim' in this.c.uid ? claims[this.c.uid.claim] : evaluate(this.c.uid.program, vars, 'uid expression');
      if (uid !== undefined && typeof uid !== 'string')
        throw new Error('oidc: error evaluating uid claim/expression: must be a string');
      if (uid) user.uid = uid;
    }
    for (const x of this.c.extra) {
      const v = evaluate(x.program, vars, `extra mapping expression for key ${JSON.stringify(x.key)}`);
      if (typeof v === 'string') {
        if (v !== '') (user.extra ??= {})[x.key] = [v];
      } else if (isStringList(v)) {
        if (v.length) (user.extra ??= {})[x.key] = v;
      } else
        throw new Error(
          `oidc: error evaluating extra claim expression: ${x.key}: must be a string or a list of strings`,
        );
    }
    const userVar = {
      user: { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} },
    };
    for (const r of this.c.userRules) {
      const ok = evaluate(r.program, userVar, `user validation expression ${JSON.stringify(r.expression)}`);
      if (ok !== true)
        throw new Error(
          r.message ??
            `oidc: error evaluating user info validation rule: validation expression ${JSON.stringify(r.expression)} failed`,
        );
    }
    return user;
  }

  private username(claims: Record<string, unknown>): string {
    const m = this.c.username;
    let name: unknown;
    if ('claim' in m) {
      name = claims[m.claim];
      if (name === undefined)
        throw new Error(`oidc: parse username claims ${JSON.stringify(m.claim)}: claim not present`);
      if (typeof name !== 'string')
        throw new Error(`oidc: parse username claims ${JSON.stringify(m.claim)}: claim is not a string`);
      if (m.claim === 'email' && 'email_verified' in claims && claims.email_verified !== true) {
        if (typeof claims.email_verified !== 'boolean')
          throw new Error("oidc: parse 'email_verified' claim: not a boolean");
        throw new Error('oidc: email not verified');
      }
      name = m.prefix + name;
    } else {
      name = evaluate(m.program, { claims }, 'username expression');
      if (typeof name !== 'string') throw new Error('oidc: error evaluating username expression: must be a string');
    }
    if (name === '') throw new Error('oidc: empty username via CEL expression is not allowed');
    return name as string;
  }

  private groups(claims: Record<string, unknown>): string[] {
    const m = this.c.groups;
    if (!m) return [];
    if ('claim' in m) {
      const v = claims[m.claim];
      if (v === undefined) return [];
      // a single string is one group, as upstream's stringOrArray
      const list = typeof v === 'string' ? [v] : isStringList(v) ? v : undefined;
      if (!list)
        throw new Error(`oidc: parse groups claim ${JSON.stringify(m.claim)}: must be a string or an array of strings`);
      return list.map((g) => m.prefix + g);
    }
    const v = evaluate(m.program, { claims }, 'groups expression');
    if (typeof v === 'string') return v === '' ? [] : [v];
    if (isStringList(v)) return v;
    throw new Error('oidc: error evaluating group claim expression: must be a string or a list of strings');
  }
}

function evaluate(p: Program, vars: Record<string, unknown>, what: string): unknown {
  try {
    return p(vars);
  } catch (e) {
    throw new Error(`oidc: error evaluating ${what}: ${(e as Error).message}`);
  }
}
