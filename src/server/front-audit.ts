/**
 * Front-thread wiring of auditing (`--audit-policy-file`, `--audit-log-*`): loads the policy,
 * opens the log, and starts each request's audit record from what the listener and the
 * authentication filter know. Off (no cost beyond one check) without a policy file and a path.
 */
import { Auditor, type AuditInput } from '../audit/auditor.js';
import { AuditLog } from '../audit/log.js';
import { loadPolicy } from '../audit/policy.js';
import type { FilterRequest } from '../http/filter-request.js';
import type { ServerOptions } from './options.js';
import { parseRequestInfo } from '../http/request-info.js';

export class FrontAudit {
  private readonly auditor: Auditor;
  private readonly log: AuditLog;

  private constructor(auditor: Auditor, log: AuditLog) {
    this.auditor = auditor;
    this.log = log;
  }

  /** undefined when auditing is off; throws the policy file's problem at start. */
  static create(o: ServerOptions, domain: string): FrontAudit | undefined {
    if (!o.auditPolicyFile || !o.auditLogPath) return undefined;
    const policy = loadPolicy(o.auditPolicyFile, domain);
    const log = new AuditLog({
      path: o.auditLogPath,
      maxSizeMB: o.auditLogMaxSizeMB,
      maxBackups: o.auditLogMaxBackups,
      maxAgeDays: o.auditLogMaxAgeDays,
    });
    return new FrontAudit(new Auditor(policy, log, domain), log);
  }

  /** After authentication: evaluates the policy and writes RequestReceived. */
  begin(r: FilterRequest): void {
    const audit = this.auditor.begin(this.input(r, r.user ?? { username: 'system:anonymous', groups: [] }));
    if (!audit) return;
    r.x.audit = audit;
    r.x.headers.push(['Audit-Id', audit.auditID]);
  }

  /**
   * Before authentication (secure port): a placeholder that writes upstream's
   * failed-authentication event if the request is answered 401 before begin() replaces it.
   */
  beforeAuthentication(r: FilterRequest): void {
    r.x.audit = {
      complete: (code) => {
        if (code === 401)
          this.auditor.failedAuthentication(this.input(r, { username: '', groups: [] }), code, 'Authentication failed');
      },
      requestBody() {},
      started() {},
      authorized() {},
      deprecated() {},
      impersonatedUser() {},
      panicked() {},
      annotate() {},
    };
  }

  private input(r: FilterRequest, user: { username: string; groups: readonly string[] }): AuditInput {
    const info = (r.info ??= parseRequestInfo(r.method, r.path, r.query));
    const qs = r.query.toString();
    return {
      user,
      verb: info.verb,
      isResourceRequest: info.isResourceRequest,
      path: r.path,
      apiGroup: info.apiGroup,
      namespace: info.namespace,
      resource: info.resource,
      subresource: info.subresource,
      name: info.name,
      requestURI: qs ? `${r.path}?${qs}` : r.path,
      apiVersion: info.apiVersion,
      sourceIPs: r.remoteAddress ? [r.remoteAddress] : [],
      userAgent: r.headers.userAgent,
      auditID: r.auditIdHeader,
    };
  }

  /** [events written, events lost to log errors] */
  counts(): [number, number] {
    return [this.auditor.events, this.log.errors];
  }

  close(): Promise<void> {
    return this.log.close();
  }
}
