/**
 * The webhook authorizer (upstream plugin/pkg/authorizer/webhook): POSTs a SubjectAccessReview
 * (v1 or v1beta1) to a remote HTTPS service and maps its status: `allowed` allows, `denied`
 * denies at once (short-circuiting the chain), neither is no opinion. Answers are cached by the
 * review's spec (allowed for authorizedTTL, the rest for unauthorizedTTL); a cache hit is
 * answered synchronously. A failed call (connection, timeout, non-2xx, malformed body) or a
 * matchCondition error answers the failure policy's decision with the error.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { isRecord } from '../../api/object.js';
import type { UserInfo } from '../../api/user.js';
import type { Attributes } from './attributes.js';
import type { Authorizer, AuthorizerResult, RulesResult } from './authorizer.js';
import type { WebhookClientConfig } from './kubeconfig.js';
import type { MatchConditions } from './match-conditions.js';

export interface WebhookSettings {
  /** the authorizer's name (config file) or `webhook` (flags) */
  name: string;
  client: WebhookClientConfig;
  /** `authorization.<domain>`: the group of the SubjectAccessReview sent */
  reviewGroup: string;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  timeoutMs: number;
  failurePolicy: 'NoOpinion' | 'Deny';
  matchConditions?: MatchConditions;
  /** first retry delay (default 500 ms; tests shorten it) */
  retryBackoffMs?: number;
  /** the clock of the cache (tests inject one) */
  now?: () => number;
}

/** upstream: attributes larger than this are never cached */
const MAX_CACHED_ATTR_SIZE = 10_000;
const MAX_CACHE_ENTRIES = 8192;
const MAX_RESPONSE_BYTES = 1 << 20;
/** upstream DefaultRetryBackoff: 5 steps from 500 ms, factor 1.5, jitter 0.2 */
const RETRY_STEPS = 5;
const RETRY_BACKOFF_MS = 500;

type RetriableError = Error & { retriable?: boolean };

interface Status {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

/** The SubjectAccessReview v1 spec of a request (upstream field order, empty fields omitted). */
export function reviewSpec(a: Attributes): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.resourceRequest) {
    const r: Record<string, string> = {};
    const put = (k: string, v: string | undefined) => {
      if (v) r[k] = v;
    };
    put('namespace', a.namespace);
    put('verb', a.verb);
    put('group', a.apiGroup);
    put('version', a.apiVersion);
    put('resource', a.resource);
    put('subresource', a.subresource);
    put('name', a.name);
    const ra: Record<string, unknown> = r;
    if (a.fieldSelector?.length) ra.fieldSelector = { requirements: a.fieldSelector };
    if (a.labelSelector?.length) ra.labelSelector = { requirements: a.labelSelector };
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  const u = a.user;
  if (u.username) spec.user = u.username;
  if (u.groups.length) spec.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) spec.extra = u.extra;
  if (u.uid) spec.uid = u.uid;
  return spec;
}

function attrSize(a: Attributes): number {
  const u: UserInfo = a.user;
  let n =
    (a.namespace?.length ?? 0) +
    a.verb.length +
    a.apiGroup.length +
    (a.apiVersion?.length ?? 0) +
    a.resource.length +
    (a.subresource?.length ?? 0) +
    (a.name?.length ?? 0) +
    a.path.length +
    u.username.length +
    (u.uid?.length ?? 0);
  for (const g of u.groups) n += g.length;
  for (const [k, vs] of Object.entries(u.extra ?? {})) {
    n += k.length;
    for (const v of vs) n += v.length;
  }
  return n;
}

export class WebhookAuthorizer implements Authorizer {
  readonly name: string;
  private readonly cache = new Map<string, { status: Status; expires: number }>();
  private readonly agent: Agent;
  private readonly url: URL;
  private readonly now: () => number;
  /** webhook calls made (for tests of the cache) */
  calls = 0;

  constructor(private readonly s: WebhookSettings) {
    this.name = s.name;
    this.now = s.now ?? Date.now;
    this.url = new URL(s.client.server);
    this.agent = new Agent({
      keepAlive: true,
      ca: s.client.ca,
      cert: s.client.cert,
      key: s.client.key,
      rejectUnauthorized: !s.client.insecureSkipTlsVerify,
    });
  }

  authorize(a: Attributes): AuthorizerResult | Promise<AuthorizerResult> {
    const spec = reviewSpec(a);
    if (this.s.matchConditions?.size) {
      const m = this.s.matchConditions.evaluate(spec);
      if ('error' in m) return this.onError(m.error);
      if (!m.matches) return { decision: 'noOpinion', reason: '' };
    }
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit && hit.expires > this.now()) return this.decide(hit.status);
    if (hit) this.cache.delete(key);
    return this.callWithRetry(spec).then(
      (status) => {
        if (attrSize(a) < MAX_CACHED_ATTR_SIZE) this.remember(key, status);
        return this.decide(status);
      },
      (e: Error) => this.onError(`Post "${this.url.href}": ${e.message}`),
    );
  }

  /** upstream: the webhook cannot list a user's rules */
  rulesFor(): RulesResult {
    return {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      errors: ['webhook authorizer does not support user rule resolution'],
    };
  }

  close(): void {
    this.agent.destroy();
  }

  private onError(error: string): AuthorizerResult {
    return { decision: this.s.failurePolicy === 'Deny' ? 'deny' : 'noOpinion', reason: '', error };
  }

  private decide(st: Status): AuthorizerResult {
    if (st.allowed && st.denied)
      return {
        decision: 'deny',
        reason: st.reason,
        error: 'webhook subject access review returned both allow and deny response',
      };
    if (st.denied) return { decision: 'deny', reason: st.reason };
    if (st.allowed) return { decision: 'allow', reason: st.reason };
    return { decision: 'noOpinion', reason: st.reason };
  }

  private remember(key: string, status: Status): void {
    if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, {
      status,
      expires: this.now() + (status.allowed ? this.s.authorizedTtlMs : this.s.unauthorizedTtlMs),
    });
  }

  private body(spec: Record<string, unknown>): string {
    const v1beta1 = this.s.subjectAccessReviewVersion === 'v1beta1';
    const out: Record<string, unknown> = { ...spec };
    if (v1beta1 && out.groups) {
      out.group = out.groups;
      delete out.groups;
    }
    return JSON.stringify({
      kind: 'SubjectAccessReview',
      apiVersion: `${this.s.reviewGroup}/${this.s.subjectAccessReviewVersion}`,
      metadata: { creationTimestamp: null },
      spec: out,
      status: { allowed: false },
    });
  }

  /**
   * upstream WithExponentialBackoff with DefaultShouldRetry: up to 5 attempts, 500 ms × 1.5ⁿ
   * apart (±20%), retrying only transient failures (a reset connection, 429, 500, 504, or a
   * Retry-After); a refused connection, a malformed answer or the timeout fail at once.
   */
  private async callWithRetry(spec: Record<string, unknown>): Promise<Status> {
    let delay = this.s.retryBackoffMs ?? RETRY_BACKOFF_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.call(spec);
      } catch (e) {
        if (!(e as RetriableError).retriable || attempt >= RETRY_STEPS) throw e;
      }
      await new Promise((done) => setTimeout(done, delay * (0.8 + 0.4 * Math.random())));
      delay *= 1.5;
    }
  }

  /** One POST with the timeout; resolves with the review's status or rejects with why. */
  private call(spec: Record<string, unknown>): Promise<Status> {
    this.calls++;
    const body = this.body(spec);
    return new Promise<Status>((resolve, reject) => {
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': Buffer.byteLength(body),
      };
      if (this.s.client.token) headers.authorization = `Bearer ${this.s.client.token}`;
      const req = httpsRequest(this.url, { method: 'POST', agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error('response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            const e: RetriableError = new Error(
              `the server responded with the status code ${code} but did not return more information`,
            );
            e.retriable = code === 429 || code === 500 || code === 504 || res.headers['retry-after'] !== undefined;
            return reject(e);
          }
          try {
            resolve(parseStatus(JSON.parse(text)));
          } catch (e) {
            reject(new Error(`malformed SubjectAccessReview response: ${(e as Error).message}`));
          }
        });
        res.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
      });
      const timer = setTimeout(() => req.destroy(new Error('context deadline exceeded')), this.s.timeoutMs);
      req.on('error', (e: RetriableError & { code?: string }) => {
        clearTimeout(timer);
        if (e.code === 'ECONNRESET' || e.code === 'EPIPE') e.retriable = true;
        reject(e);
      });
      req.end(body);
    });
  }
}

function parseStatus(doc: unknown): Status {
  if (!isRecord(doc)) throw new Error('not an object');
  // an absent or null status is an empty one
  const st = doc.status ?? {};
  if (!isRecord(st)) throw new Error('status is not an object');
  for (const k of ['allowed', 'denied'] as const)
    if (st[k] !== undefined && typeof st[k] !== 'boolean') throw new Error(`status.${k} is not a boolean`);
  for (const k of ['reason', 'evaluationError'] as const)
    if (st[k] !== undefined && typeof st[k] !== 'string') throw new Error(`status.${k} is not a string`);
  return {
    allowed: st.allowed === true,
    denied: st.denied === true,
    reason: typeof st.reason === 'string' ? st.reason : '',
    evaluationError: typeof st.evaluationError === 'string' ? st.evaluationError : '',
  };
}
