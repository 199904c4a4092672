/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`): bearer tokens `<id>.<secret>`
 * ([a-z0-9]{6}.[a-z0-9]{16}) backed by secrets `bootstrap-token-<id>` of type
 * `bootstrap.<product>.io/token` in the system namespace. The secrets are kept in memory from
 * the initial objects and every change event, so authentication is one Map lookup. Rules are
 * upstream's (plugin/pkg/auth/authenticator/token/bootstrap): a token whose secret is missing,
 * being deleted, of another type, with another secret or id, expired, not marked
 * `usage-bootstrap-authentication: "true"`, or with an invalid `auth-extra-groups` entry is not
 * authenticated. User `system:bootstrap:<id>`, groups `system:bootstrappers` plus the extra
 * groups, sorted and deduplicated.
 */
import { timingSafeEqual } from 'node:crypto';
import type { ChangeEvent, CachedObject } from '../actors/protocol.js';
import { typeKeyOf } from '../actors/routing.js';
import { NOT_MINE, type AuthResult, type TokenAuthenticator } from '../api/user.js';
import { audienceAgnostic } from './audiences.js';
import type { Secret } from '../api/kinds.js';

export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_GROUP = 'system:bootstrappers';
export const SECRET_PREFIX = 'bootstrap-token-';
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const SECRETS = typeKeyOf('', 'secrets');

interface TokenSecret {
  deleting: boolean;
  type: string;
  /** decoded data values */
  data: Record<string, string>;
}

/** Upstream bootstrapsecretutil.GetGroups: the default group plus validated extra groups. */
export function bootstrapGroups(extra: string | undefined): string[] | { error: string } {
  const groups = new Set([BOOTSTRAP_GROUP]);
  if (extra) {
    for (const g of extra.split(',')) {
      if (!GROUP_RE.test(g)) return { error: `${JSON.stringify(g)} (must match ${GROUP_RE.source})` };
      groups.add(g);
    }
  }
  return [...groups].sort();
}

/** Upstream HasExpired: an unparseable expiration counts as expired. */
export function expired(expiration: string | undefined, now: number): boolean {
  if (expiration === undefined || expiration === '') return false;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(expiration)) return true;
  const t = Date.parse(expiration);
  return Number.isNaN(t) || t <= now;
}

export class BootstrapTokens {
  private readonly secrets = new Map<string, TokenSecret>();
  private readonly now: () => number;

  constructor(
    private readonly systemNamespace: string,
    private readonly secretType: string,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
  }

  /** The secrets present at start. */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects) {
      if (this.relevant(o.typeKey, o.namespace, o.name)) this.put(o.name, o.json);
    }
  }

  /** Every committed change (the server's onEvents). */
  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (!this.relevant(ev.typeKey, ev.namespace, ev.name)) continue;
      if (ev.type === 'DELETED') this.secrets.delete(ev.name);
      else this.put(ev.name, ev.json);
    }
  }

  get size(): number {
    return this.secrets.size;
  }

  private relevant(typeKey: string, namespace: string, name: string): boolean {
    return typeKey === SECRETS && namespace === this.systemNamespace && name.startsWith(SECRET_PREFIX);
  }

  private put(name: string, json: string): void {
    let obj: Secret; // a stored Secret (JSON from the store)
    try {
      obj = JSON.parse(json);
    } catch {
      this.secrets.delete(name);
      return;
    }
    const data: Record<string, string> = {};
    if (obj.data && typeof obj.data === 'object') {
      for (const [k, v] of Object.entries(obj.data))
        if (typeof v === 'string') data[k] = Buffer.from(v, 'base64').toString('utf8');
    }
    this.secrets.set(name, { deleting: Boolean(obj.metadata?.deletionTimestamp), type: String(obj.type ?? ''), data });
  }

  /** Authenticates `<id>.<secret>`; anything else is not ours. Reasons go to logs and TokenReview only. */
  authenticate(token: string): AuthResult {
    const m = TOKEN_RE.exec(token);
    if (!m) return NOT_MINE;
    const [, id, secret] = m as unknown as [string, string, string];
    const name = SECRET_PREFIX + id;
    const s = this.secrets.get(name);
    const fail = (why: string): AuthResult => ({
      kind: 'error',
      reason: `bootstrap token secret ${this.systemNamespace}/${name} ${why}`,
    });
    if (!s) return NOT_MINE;
    if (s.deleting) return fail('is deleted and awaiting removal');
    if (s.type !== this.secretType) return fail(`has invalid type, expected ${this.secretType}`);
    const stored = Buffer.from(s.data['token-secret'] ?? '');
    const given = Buffer.from(secret);
    if (stored.length !== given.length || !timingSafeEqual(stored, given))
      return fail('has invalid value for key token-secret');
    if (s.data['token-id'] !== id) return fail('has invalid value for key token-id');
    if (expired(s.data['expiration'], this.now())) return fail('has expired');
    if (s.data['usage-bootstrap-authentication'] !== 'true')
      return fail('not marked usage-bootstrap-authentication=true');
    const groups = bootstrapGroups(s.data['auth-extra-groups']);
    if (!Array.isArray(groups)) return fail(`has invalid value for key auth-extra-groups: ${groups.error}`);
    return { kind: 'user', user: { username: BOOTSTRAP_USER_PREFIX + id, groups } };
  }

  authenticator(apiAudiences: readonly string[]): TokenAuthenticator {
    return audienceAgnostic(apiAudiences, { authenticateToken: (t) => this.authenticate(t) });
  }
}
