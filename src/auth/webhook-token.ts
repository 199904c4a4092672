/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`): the token is
 * POSTed as a TokenReview (`--authentication-token-webhook-version`, v1beta1 by default as
 * upstream) to the server of the kubeconfig's current context, which must answer a TokenReview
 * of the same apiVersion. Answers (users, refusals and errors alike, as upstream's cached
 * authenticator with cacheErrs) are cached for `--authentication-token-webhook-cache-ttl`
 * (default 2m) per token and audiences, keyed by a SHA-256 of both so no token is kept in
 * memory; a cached answer is synchronous. Concurrent reviews of the same key share one call.
 * Connection errors, 429 and 5xx are retried with upstream's backoff (500ms × 1.5, 5 tries).
 */
import { createHash } from 'node:crypto';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { fieldAt, isRecord } from '../api/object.js';
import type { ClientConfig } from './kubeconfig.js';
import { intersect } from './audiences.js';
import { NOT_MINE, type AuthResult, type MaybeAsync, type TokenAuthenticator, type UserInfo } from '../api/user.js';

export interface WebhookTokenConfig {
  client: ClientConfig;
  /** 'v1' or 'v1beta1' */
  version: string;
  /** the served authentication group, e.g. authentication.plat.io */
  group: string;
  cacheTtlMs: number;
  /** the API audiences (used when the webhook's answer names none) */
  implicitAudiences: readonly string[];
  now?: () => number;
  timeoutMs?: number;
  backoff?: { initialMs: number; factor: number; steps: number };
}

export const WEBHOOK_VERSIONS = ['v1', 'v1beta1'];
const MAX_ENTRIES = 10_000;

interface Entry {
  result: AuthResult;
  until: number;
}

class RetryableError extends Error {}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<AuthResult>>();
  private readonly now: () => number;
  private readonly agent: HttpAgent;
  private readonly url: URL;
  /** remote calls made (for tests and metrics) */
  calls = 0;

  constructor(private readonly cfg: WebhookTokenConfig) {
    this.now = cfg.now ?? Date.now;
    this.url = new URL(cfg.client.server);
    const c = cfg.client;
    this.agent =
      this.url.protocol === 'https:'
        ? new HttpsAgent({
            keepAlive: true,
            ca: c.ca,
            cert: c.cert,
            key: c.key,
            rejectUnauthorized: !c.insecureSkipTLSVerify,
          })
        : new HttpAgent({ keepAlive: true });
  }

  authenticateToken(token: string, audiences: readonly string[]): MaybeAsync<AuthResult> {
    const key = createHash('sha256').update(audiences.join('\u0000')).update('\u0001').update(token).digest('base64');
    const hit = this.cache.get(key);
    if (hit) {
      if (hit.until > this.now()) return hit.result;
      this.cache.delete(key);
    }
    const inflight = this.pending.get(key);
    if (inflight) return inflight;
    const p = this.review(token, audiences)
      .catch((e): AuthResult => ({ kind: 'error', reason: `webhook token authenticator: ${(e as Error).message}` }))
      .then((result) => {
        this.pending.delete(key);
        if (this.cfg.cacheTtlMs > 0) {
          if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(key, { result, until: this.now() + this.cfg.cacheTtlMs });
        }
        return result;
      });
    this.pending.set(key, p);
    return p;
  }

  close(): void {
    this.agent.destroy();
  }

  private async review(token: string, audiences: readonly string[]): Promise<AuthResult> {
    const apiVersion = `${this.cfg.group}/${this.cfg.version}`;
    const spec: Record<string, unknown> = { token };
    if (audiences.length) spec.audiences = audiences;
    const body = JSON.stringify({
      apiVersion,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec,
      status: { user: {} },
    });
    const reply = await this.postWithRetry(body);
    let r: unknown;
    try {
      r = JSON.parse(reply);
    } catch {
      throw new Error('the webhook answered with a body that is not JSON');
    }
    const kind = fieldAt(r, 'kind'),
      answered = fieldAt(r, 'apiVersion');
    if (kind !== 'TokenReview' || answered !== apiVersion) {
      throw new Error(
        `the webhook answered ${JSON.stringify(answered)} ${JSON.stringify(kind)}, expected ${apiVersion} TokenReview`,
      );
    }
    const st = asRecord(fieldAt(r, 'status'));
    if (st.authenticated !== true) {
      return typeof st.error === 'string' && st.error !== '' ? { kind: 'error', reason: st.error } : NOT_MINE;
    }
    let auds: string[] | undefined;
    if (audiences.length) {
      const got: readonly string[] =
        Array.isArray(st.audiences) && st.audiences.length ? st.audiences.map(String) : this.cfg.implicitAudiences;
      auds = intersect(audiences, got);
      if (auds.length === 0) return NOT_MINE;
    }
    return { kind: 'user', user: toUser(asRecord(st.user)), audiences: auds };
  }

  private async postWithRetry(body: string): Promise<string> {
    const { initialMs, factor, steps } = this.cfg.backoff ?? { initialMs: 500, factor: 1.5, steps: 5 };
    let wait = initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.post(body);
      } catch (e) {
        if (!(e instanceof RetryableError) || attempt >= steps) throw e;
        await new Promise((d) => setTimeout(d, wait * (0.9 + Math.random() * 0.2)));
        wait *= factor;
      }
    }
  }

  private post(body: string): Promise<string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    };
    if (this.cfg.client.token) headers.authorization = `Bearer ${this.cfg.client.token}`;
    const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    this.calls++;
    return new Promise((done, fail) => {
      const req = send(
        this.url,
        { method: 'POST', headers, agent: this.agent, timeout: this.cfg.timeoutMs ?? 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => fail(new RetryableError(e.message)));
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) return done(Buffer.concat(chunks).toString('utf8'));
            const err = `the webhook answered HTTP ${code}`;
            fail(code === 429 || code >= 500 ? new RetryableError(err) : new Error(err));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => fail(new RetryableError(e.message)));
      req.end(body);
    });
  }
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.map(String) : undefined;
}

/** A TokenReview's status or user as answered: a field absent (or not an object) has none of the fields read. */
const asRecord = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

function toUser(u: Record<string, unknown>): UserInfo {
  const out: UserInfo = { username: typeof u.username === 'string' ? u.username : '', groups: strings(u.groups) ?? [] };
  if (typeof u.uid === 'string' && u.uid) out.uid = u.uid;
  if (u.extra && typeof u.extra === 'object') {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(u.extra)) extra[k] = strings(v) ?? [];
    if (Object.keys(extra).length) out.extra = extra;
  }
  return out;
}
