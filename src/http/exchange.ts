/** Thin helpers over uWebSockets.js responses: status lines, bodies, bounded request bodies. */
import type { HttpResponse } from 'uWebSockets.js';
import type { Status } from '../api/status.js';
import { errors, orderedStatus, toStatus } from '../api/status.js';
import type { Encoding } from '../actors/protocol.js';
import { contentTypeOf, encode } from '../codec/codec.js';

const REASONS: Record<number, string> = {
  200: 'OK',
  304: 'Not Modified',
  201: 'Created',
  202: 'Accepted',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const STATUS_LINES = new Map<number, string>();
export function statusLine(code: number): string {
  let s = STATUS_LINES.get(code);
  if (!s) STATUS_LINES.set(code, (s = `${code} ${REASONS[code] ?? 'Unknown'}`));
  return s;
}

/** Per-request state the front thread keeps: whether the client went away. */
export interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  /** extra response headers; an entry may be shared between requests (never modify one in place) */
  headers: (readonly [string, string])[];
  /** called once when the client goes away (streams release their resources) */
  onAbort?: () => void;
  /** releases the request's in-flight slot; called when the response ends or the client leaves */
  release?: () => void;
  /** a HEAD request: the response carries the headers (and the length) of the GET, no body */
  head?: boolean;
  /** told when the response starts (its status code) and when a stream opens and ends (metrics) */
  observer?: ResponseObserver;
  /** when the request arrived (performance.now()), for the latency metrics */
  start?: number;
  /** the request's metrics series, once resolved (opaque here; see src/server/front-metrics.ts) */
  series?: unknown;
  /** what identifies the request when it is answered before its series was resolved */
  request?: {
    method: string;
    path: string;
    query: URLSearchParams;
    user?: { username: string };
    remoteAddress?: string;
    info?: { verb: string };
  };
  /** the request's audit record when the audit policy selected it (see src/audit) */
  audit?: ExchangeAudit;
  /**
   * true while the uWS request handler that received the request runs: uWS has corked its
   * socket, so a reply written now needs no cork of its own (the listener clears it on return)
   */
  inHandler?: boolean;
  /** the TLS front took its connection over: it may be answered with the directive handing an upgrade (exec, attach, portforward) or a pods/log stream to the front */
  upgradable?: boolean;
}

/** What the response path tells the request's audit record. */
export interface ExchangeAudit {
  /** the request body, once read */
  requestBody(body: Buffer): void;
  /** a long-running response started streaming */
  started(): void;
  /** the response was written (body for RequestResponse), or the stream ended */
  complete(code: number, body?: string | Uint8Array, contentType?: string): void;
  /** the authorization filter's decision and reason */
  authorized(allowed: boolean, reason: string): void;
  /** a deprecated API was requested */
  deprecated(removedRelease: string): void;
  /** the user the request acts as after impersonation */
  impersonatedUser(user: {
    username: string;
    uid?: string;
    groups?: readonly string[];
    extra?: Record<string, readonly string[]>;
  }): void;
  /** an unexpected failure (answered with 500) */
  panicked(message: string): void;
  /** adds an annotation to the request's events */
  annotate(key: string, value: string): void;
}

/** Watches responses on behalf of the metrics; every call is O(1) on the hot path. */
export interface ResponseObserver {
  /** a complete response was written with this status code (and body size, when known) */
  responded(x: Exchange, code: number, bytes?: number): void;
  /** a long-running response (watch) started streaming */
  streamOpened(x: Exchange): void;
  /** that stream ended (any way) */
  streamClosed(x: Exchange): void;
}

export function send(x: Exchange, code: number, contentType: string, body: string | Uint8Array): void {
  if (x.aborted || x.done) return;
  x.done = true;
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  x.observer?.responded(x, code, bytes);
  x.audit?.complete(code, body, contentType);
  try {
    // hot path: inside the request's handler the socket is already corked (no closure, no cork)
    if (x.inHandler) writeReply(x, code, contentType, body, bytes);
    else x.res.cork(() => writeReply(x, code, contentType, body, bytes));
  } finally {
    // the seat goes after the write: a request it dispatches at once (and corks its own
    // socket) runs once this reply is in its socket's buffer
    x.release?.();
  }
}

function writeReply(x: Exchange, code: number, contentType: string, body: string | Uint8Array, bytes: number): void {
  x.res.writeStatus(statusLine(code)).writeHeader('Content-Type', contentType);
  for (const [k, v] of x.headers) x.res.writeHeader(k, v);
  if (x.head) x.res.endWithoutBody(bytes);
  else x.res.end(body);
}

/**
 * Writes a Status; in the negotiated encoding when there is one (a view's base format), so a
 * Protobuf or CBOR client can read its errors. Without one (e.g. the 406 itself), JSON.
 */
export function sendStatus(x: Exchange, status: Status, pretty = false, enc?: Encoding): void {
  const s = orderedStatus(status);
  if (s.details?.retryAfterSeconds !== undefined) x.headers.push(['Retry-After', String(s.details.retryAfterSeconds)]);
  if (enc && enc.format !== 'json') {
    const plain: Encoding = { format: enc.format, pretty, mediaType: enc.mediaType };
    try {
      return send(x, s.code, contentTypeOf(plain), encode(s, plain));
    } catch {
      /* a Status always encodes; JSON if it ever does not */
    }
  }
  send(x, s.code, 'application/json', pretty ? JSON.stringify(s, null, 2) : JSON.stringify(s) + '\n');
}

/** Reads the whole body, refusing more than limit bytes with 413 before buffering it all. */
export function readBody(
  x: Exchange,
  limit: number,
  declared: number,
  done: (body: Buffer) => void,
  fail: (s: Status) => void,
): void {
  if (declared > limit) {
    fail(errors.requestEntityTooLarge(limit).status);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  x.res.onData((ab, isLast) => {
    if (over) return;
    size += ab.byteLength;
    if (size > limit) {
      over = true;
      fail(errors.requestEntityTooLarge(limit).status);
      return;
    }
    // uWS reuses the ArrayBuffer after this callback returns: copy it. Buffer.from of a view copies
    // a small body into Node's shared pool; ab.slice(0) made an ArrayBuffer per request (measured
    // 0.3-0.8 against 1.4-1.9 µs of CPU for a 1 KB create body, and less external memory for the GC)
    chunks.push(Buffer.from(new Uint8Array(ab)));
    if (!isLast) return;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    x.audit?.requestBody(body);
    done(body);
  });
}

/** Delivers a request body (read now, or pre-read by a filter). */
type Reader = (done: (body: Buffer) => void, fail: (s: Status) => void) => void;

/**
 * Reads the whole body, runs an asynchronous check on it, then hands the request on with the
 * same bytes (admission-style guards); a failed check or read answers its Status, unless
 * `handled` took the check's failure over (a pinned write starting over, src/http/pin.ts).
 */
export function checkBodyThen<
  R extends { x: Exchange; headers: { contentLength: number }; body?: Reader; enc: { pretty: boolean } },
>(
  r: R,
  maxBody: number,
  check: (buf: Buffer) => Promise<void>,
  next: (r: R) => void,
  handled: (e: unknown) => boolean = () => false,
): void {
  const read: Reader = r.body ?? ((done, fail) => readBody(r.x, maxBody, r.headers.contentLength, done, fail));
  read(
    (buf) => {
      check(buf)
        .then(() => next({ ...r, body: (done: (b: Buffer) => void) => done(buf) }))
        .catch((e) => handled(e) || sendStatus(r.x, toStatus(e), r.enc.pretty));
    },
    (st) => sendStatus(r.x, st),
  );
}

/**
 * The most one corked write may carry: this uWS build corrupts a chunked response on a unix
 * socket (the TLS front's internal listener) when a corked write larger than its 16 KiB cork
 * buffer meets a partial write; pieces that fit the cork buffer are sent in order.
 */
export const MAX_CORKED_WRITE = 16 * 1024 - 64;

/** Writes a body chunk in cork-sized pieces; false when uWS had to keep some (backpressure). */
export function writeChunk(res: HttpResponse, chunk: Uint8Array): boolean {
  let ok = true;
  for (let off = 0; off < chunk.byteLength; off += MAX_CORKED_WRITE) {
    const piece = chunk.subarray(off, Math.min(chunk.byteLength, off + MAX_CORKED_WRITE));
    res.cork(() => {
      ok = res.write(piece) && ok;
    });
  }
  return ok;
}
