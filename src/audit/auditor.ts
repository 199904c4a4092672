/**
 * Audit events (audit.plat.io/v1 Event) for one request: the policy decides the level when
 * the request has been authenticated; the event is written at each stage the policy keeps
 * (RequestReceived at once, ResponseStarted when a watch starts streaming, ResponseComplete
 * when the response is written or the watch ends, Panic for an unexpected failure), with the
 * request body at Request and the response body at RequestResponse, and the annotations that
 * authorization and deprecation add.
 */
import { randomUUID } from 'node:crypto';
import type { ExchangeAudit } from '../http/exchange.js';
import {
  evaluate,
  type AuditAttributes,
  type Level,
  type Policy,
  type RequestAuditConfig,
  type Stage,
} from './policy.js';
import type { AuditLog } from './log.js';
import { stringifyValue } from '../schema/deep-value.js';

/** What the auditor learns about a request when it is authenticated. */
export interface AuditInput extends AuditAttributes {
  requestURI: string;
  apiVersion: string;
  sourceIPs: string[];
  userAgent: string | undefined;
  /** the client's Audit-ID header, if any */
  auditID: string | undefined;
}

interface UserOut {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const RANK: Record<Level, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

/** RFC 3339 with microseconds, as upstream's MicroTime. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class Auditor {
  readonly apiVersion: string;

  constructor(
    private readonly policy: Policy,
    private readonly log: AuditLog,
    readonly domain: string,
  ) {
    this.apiVersion = `audit.${domain}/v1`;
  }

  /** Starts auditing a request; undefined when the policy says None. */
  begin(input: AuditInput): RequestAudit | undefined {
    const config = evaluate(this.policy, input);
    if (config.level === 'None') return undefined;
    const a = new RequestAudit(this, config, input);
    a.emit('RequestReceived');
    return a;
  }

  /** events written so far (apiserver_audit_event_total) */
  events = 0;

  write(event: object): void {
    this.events++;
    // stringifyValue: a responseObject may nest deeper than JSON.stringify recurses (an old stored object)
    this.log.write(stringifyValue(event));
  }

  /**
   * A request that failed authentication (upstream's failed-authentication audit): the policy
   * is evaluated without a user; at Metadata or above one ResponseStarted event is written.
   */
  failedAuthentication(input: AuditInput, code: number, message: string): void {
    const config = evaluate(this.policy, input);
    if (config.level === 'None' || config.omitStages.has('ResponseStarted')) return;
    const now = microTime(Date.now());
    const ev: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: this.apiVersion,
      level: config.level,
      auditID: input.auditID || randomUUID(),
      stage: 'ResponseStarted',
      requestURI: input.requestURI,
      verb: input.verb,
      user: {},
      sourceIPs: input.sourceIPs,
    };
    if (input.userAgent) ev.userAgent = input.userAgent;
    if (input.isResourceRequest) ev.objectRef = objectRef(input);
    ev.responseStatus = { metadata: {}, message, code };
    ev.requestReceivedTimestamp = now;
    ev.stageTimestamp = now;
    this.write(ev);
  }
}

export class RequestAudit implements ExchangeAudit {
  readonly auditID: string;
  private readonly received = Date.now();
  private readonly annotations: Record<string, string> = {};
  private impersonated: UserOut | undefined;
  private body: Buffer | undefined;
  private status: Record<string, unknown> | undefined;
  private response: unknown;
  private finished = false;

  constructor(
    private readonly auditor: Auditor,
    private readonly config: RequestAuditConfig,
    private readonly input: AuditInput,
  ) {
    this.auditID = input.auditID || randomUUID();
  }

  /** The authorization filter's decision (`authorization.<domain>/decision` and `/reason`). */
  authorized(allowed: boolean, reason: string): void {
    this.annotations[`authorization.${this.auditor.domain}/decision`] = allowed ? 'allow' : 'forbid';
    this.annotations[`authorization.${this.auditor.domain}/reason`] = reason;
  }

  /** A request to a deprecated API (`<domain>/deprecated`, `<domain>/removed-release`). */
  deprecated(removedRelease: string): void {
    this.annotations[`${this.auditor.domain}/deprecated`] = 'true';
    if (removedRelease) this.annotations[`${this.auditor.domain}/removed-release`] = removedRelease;
  }

  annotate(key: string, value: string): void {
    this.annotations[key] = value;
  }

  /** The user after impersonation, when it differs from the authenticated one. */
  impersonatedUser(user: {
    username: string;
    uid?: string;
    groups?: readonly string[];
    extra?: Record<string, readonly string[]>;
  }): void {
    if (user.username === this.input.user.username) return;
    this.impersonated = userOut(user);
  }

  requestBody(body: Buffer): void {
    if (RANK[this.config.level] >= RANK.Request) this.body = body;
  }

  started(): void {
    this.status = { metadata: {}, code: 200 };
    this.emit('ResponseStarted');
  }

  complete(code: number, body?: string | Uint8Array, contentType?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.status = responseStatus(code, body, contentType);
    if (
      RANK[this.config.level] >= RANK.RequestResponse &&
      body !== undefined &&
      contentType?.startsWith('application/json')
    ) {
      this.response = parseJson(body);
    }
    this.emit('ResponseComplete');
  }

  /** An unexpected failure answered with 500 (upstream's Panic stage). */
  panicked(message: string): void {
    if (this.finished) return;
    this.finished = true;
    this.status = {
      metadata: {},
      status: 'Failure',
      message: `APIServer panic'd: ${message}`,
      reason: 'InternalError',
      code: 500,
    };
    this.emit('Panic');
  }

  emit(stage: Stage): void {
    if (this.config.omitStages.has(stage)) return;
    const i = this.input;
    const ev: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: this.auditor.apiVersion,
      level: this.config.level,
      auditID: this.auditID,
      stage,
      requestURI: i.requestURI,
      verb: i.verb,
      user: userOut(i.user),
    };
    if (this.impersonated) ev.impersonatedUser = this.impersonated;
    ev.sourceIPs = i.sourceIPs;
    if (i.userAgent) ev.userAgent = i.userAgent;
    if (i.isResourceRequest) ev.objectRef = objectRef(i);
    if (stage !== 'RequestReceived' && this.status) ev.responseStatus = this.status;
    if (this.body && RANK[this.config.level] >= RANK.Request) {
      const obj = parseJson(this.body);
      if (obj !== undefined) ev.requestObject = this.config.omitManagedFields ? withoutManagedFields(obj) : obj;
    }
    if (stage === 'ResponseComplete' && this.response !== undefined) {
      ev.responseObject = this.config.omitManagedFields ? withoutManagedFields(this.response) : this.response;
    }
    ev.requestReceivedTimestamp = microTime(this.received);
    ev.stageTimestamp = microTime(Date.now());
    if (Object.keys(this.annotations).length) ev.annotations = { ...this.annotations };
    this.auditor.write(ev);
  }
}

function userOut(u: {
  username: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Record<string, readonly string[]>;
}): UserOut {
  const out: UserOut = { username: u.username };
  if (u.uid) out.uid = u.uid;
  if (u.groups?.length) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length)
    out.extra = Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

function objectRef(i: AuditInput): Record<string, string> {
  const ref: Record<string, string> = { resource: i.resource };
  if (i.namespace) ref.namespace = i.namespace;
  if (i.name) ref.name = i.name;
  if (i.apiGroup) ref.apiGroup = i.apiGroup;
  ref.apiVersion = i.apiVersion;
  if (i.subresource) ref.subresource = i.subresource;
  return ref;
}

function parseJson(body: string | Uint8Array): unknown {
  try {
    const v = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** upstream: the code, and for a Status response its bounded fields */
function responseStatus(
  code: number,
  body: string | Uint8Array | undefined,
  contentType: string | undefined,
): Record<string, unknown> {
  const plain = { metadata: {}, code };
  if (body === undefined || !contentType?.startsWith('application/json')) return plain;
  const head = typeof body === 'string' ? body.slice(0, 200) : Buffer.from(body.subarray(0, 200)).toString('utf8');
  if (!/"kind":\s*"Status"/.test(head)) return plain;
  const s = parseJson(body) as Record<string, unknown> | undefined;
  if (s?.kind !== 'Status') return plain;
  const out: Record<string, unknown> = { metadata: {} };
  for (const k of ['status', 'message', 'reason', 'details'] as const) if (s[k] !== undefined) out[k] = s[k];
  out.code = code;
  return out;
}

function withoutManagedFields(obj: unknown): unknown {
  const o = obj as { metadata?: Record<string, unknown>; items?: unknown[] };
  if (o.metadata && 'managedFields' in o.metadata) {
    const { managedFields: _, ...rest } = o.metadata;
    void _;
    return { ...o, metadata: rest, ...(Array.isArray(o.items) ? { items: o.items.map(withoutManagedFields) } : {}) };
  }
  if (Array.isArray(o.items)) return { ...o, items: o.items.map(withoutManagedFields) };
  return obj;
}
