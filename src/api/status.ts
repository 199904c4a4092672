/**
 * The one error type of the server. Every layer throws or returns a StatusError; only the
 * outermost layer renders it. Across threads it travels as its plain `Status` object.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export interface Target {
  group?: string;
  kind?: string;
  name?: string;
}

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
  get code(): number {
    return this.status.code;
  }
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): StatusError {
  // upstream's struct order (clients compare bytes): details sits between reason and code
  const d = details && Object.keys(details).length ? details : undefined;
  const status: Status = d
    ? { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details: d, code }
    : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  return new StatusError(status);
}

function qualified(t: Target): string {
  return t.group ? `${t.kind}.${t.group}` : `${t.kind}`;
}

function details(t: Target, extra?: StatusDetails): StatusDetails {
  const d: StatusDetails = {};
  if (t.name !== undefined) d.name = t.name;
  if (t.group) d.group = t.group;
  if (t.kind) d.kind = t.kind;
  return { ...d, ...extra };
}

/** resource is the plural lower-case name used by upstream messages, e.g. "configmaps". */
export const errors = {
  badRequest: (message: string) => failure(400, 'BadRequest', message),
  notFound: (t: Target & { resource: string }) =>
    failure(
      404,
      'NotFound',
      `${t.resource}${t.group ? '.' + t.group : ''} "${t.name}" not found`,
      details({ ...t, kind: t.resource }),
    ),
  notFoundMessage: (message: string) => failure(404, 'NotFound', message),
  alreadyExists: (t: Target & { resource: string }) =>
    failure(
      409,
      'AlreadyExists',
      `${t.resource}${t.group ? '.' + t.group : ''} "${t.name}" already exists`,
      details({ ...t, kind: t.resource }),
    ),
  conflict: (t: Target & { resource: string }, why: string) =>
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${t.resource}${t.group ? '.' + t.group : ''} "${t.name}": ${why}`,
      details({ ...t, kind: t.resource }),
    ),
  invalid: (t: Target, causes: StatusCause[]) =>
    failure(
      422,
      'Invalid',
      `${qualified(t)} "${t.name ?? ''}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
      details(t, { causes }),
    ),
  /** a patch that cannot be applied (bad path, failed test): 422 as upstream */
  invalidPatch: (message: string) =>
    failure(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`),
  applyConflict: (message: string, d: StatusDetails) => failure(409, 'Conflict', message, d),
  unsupportedPatch: (message: string) => failure(415, 'UnsupportedMediaType', message),
  methodNotAllowed: (message: string) => failure(405, 'MethodNotAllowed', message),
  notAcceptable: (message: string) => failure(406, 'NotAcceptable', message),
  unsupportedMediaType: (contentType: string, accepted: string[] = ['application/json', 'application/yaml']) =>
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      { causes: [{ reason: 'UnsupportedMediaType', message: contentType }] },
    ),
  requestEntityTooLarge: (limit: number) =>
    failure(413, 'RequestEntityTooLarge', `the request body is larger than the limit of ${limit} bytes`),
  /** an object whose stored form exceeds the storage limit (etcd's default --max-request-bytes) */
  objectTooLarge: (limit: number) =>
    failure(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: the stored object would exceed the limit of ${limit} bytes`,
    ),
  gone: (message: string) => failure(410, 'Expired', message),
  forbidden: (message: string, t?: Target, causes?: StatusCause[]) =>
    failure(403, 'Forbidden', message, t ? details(t, causes ? { causes } : undefined) : undefined),
  tooLargeResourceVersion: (requested: string, current: string) =>
    failure(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  timeout: (message: string) => failure(504, 'Timeout', message),
  tooManyRequests: (message: string, retryAfterSeconds: number) =>
    failure(429, 'TooManyRequests', message, { retryAfterSeconds }),
  serviceUnavailable: (message: string) => failure(503, 'ServiceUnavailable', message),
  internal: (message: string) =>
    failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  /** a 500 whose message is the caller's whole text (a panic's or a failed conversion's wording) */
  internalAs: (message: string) => failure(500, 'InternalError', message),
};

/**
 * The Status in upstream's metav1.Status field order (kind, apiVersion, metadata, status,
 * message, reason, details, code), whoever built it; absent fields stay absent.
 */
export function orderedStatus(s: Status): Status {
  const o: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: s.metadata ?? {} };
  if (s.status !== undefined) o.status = s.status;
  if (s.message !== undefined) o.message = s.message;
  if (s.reason !== undefined) o.reason = s.reason;
  if (s.details !== undefined) o.details = s.details;
  if (s.code !== undefined) o.code = s.code;
  return o as unknown as Status;
}

/** Converts anything thrown into a Status, never leaking a stack trace to clients. */
export function toStatus(e: unknown): Status {
  if (e instanceof StatusError) return e.status;
  if (e && typeof e === 'object' && (e as Status).kind === 'Status') return e as Status;
  return errors.internal(e instanceof Error ? e.message : String(e)).status;
}

export function successStatus(d?: StatusDetails): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(d ? { details: d } : {}) };
}
