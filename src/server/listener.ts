/**
 * The front thread's side of uWebSockets.js: reading a request into a FilterRequest (at once:
 * uWS request data dies with the call) and opening the plain `--port` listener. The secure port
 * is opened by src/server/front-authentication.ts with the same reading function.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { Exchange } from '../http/exchange.js';
import type { FrontMetrics } from './front-metrics.js';
import type { RequestHeaders } from '../http/context.js';
import type { FilterRequest } from '../http/filter-request.js';
import { NO_CREDENTIALS, UNSECURED_USER } from './front-authentication.js';
import { listenError } from '../api/startup-error.js';

const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\./.test(host);

/** A bound plain listener: its port (0 when `--port` is off), its socket and app while open. */
export interface PlainListener {
  port: number;
  socket?: us_listen_socket;
  app?: TemplatedApp;
}

/**
 * Reads what the request path needs from uWS, synchronously, as system:unsecured until the
 * filters say otherwise; audited: also the remote address and Audit-ID header.
 */
/** A path that may name a connect subresource (cheap pre-check; the handler decides). */
const CONNECT_PATH = /\/(?:proxy|exec|attach|portforward)(?:\/|$)/;
/** /api and /apis: the documents aggregated discovery serves (with an ETag). */
const DISCOVERY_ROOT = /^\/apis?\/?$/;

/** The header names every request reads, pre-encoded (uWS takes bytes as they are, a string is converted per call). */
const ACCEPT = Buffer.from('accept');
const CONTENT_TYPE = Buffer.from('content-type');
const CONTENT_LENGTH = Buffer.from('content-length');
const USER_AGENT = Buffer.from('user-agent');
const ACCEPT_ENCODING = Buffer.from('accept-encoding');

/**
 * The query of every request without one (most writes): shared, so nothing may change it, and
 * nothing does (a request's query is only read); a change would throw rather than leak into
 * other requests.
 */
class NoQuery extends URLSearchParams {
  override append(): never {
    throw new Error('a request without a query has a read-only URLSearchParams');
  }
  override delete(): never {
    return this.append();
  }
  override set(): never {
    return this.append();
  }
  override sort(): never {
    return this.append();
  }
}
export const NO_QUERY: URLSearchParams = new NoQuery();

/**
 * Reads the request. The Exchange is made with every field the pipeline sets later (one object
 * shape for all requests); it is marked in its handler until `leaveHandler` runs, which also
 * attaches the abort handler when the request was not answered during the handler call.
 */
export function acceptRequest(
  res: HttpResponse,
  req: HttpRequest,
  metrics: FrontMetrics,
  audited: boolean,
): FilterRequest {
  const method = req.getCaseSensitiveMethod?.() ?? req.getMethod().toUpperCase();
  const x: Exchange = { res, aborted: false, done: false, headers: [], inHandler: true };
  // a HEAD reply (endWithoutBody) does not count as answered for uWS when its handler returns:
  // such a request always has the abort handler, attached before anything is written
  if (method === 'HEAD') {
    x.head = true;
    watchAbort(x);
  }
  metrics.begin(x);
  const path = req.getUrl();
  const raw = req.getQuery();
  const query = raw ? new URLSearchParams(raw) : NO_QUERY;
  const headers: RequestHeaders = {
    accept: req.getHeader(ACCEPT) || undefined,
    contentType: req.getHeader(CONTENT_TYPE) || undefined,
    contentLength: Number(req.getHeader(CONTENT_LENGTH) || 0),
    userAgent: req.getHeader(USER_AGENT) || undefined,
    acceptEncoding: req.getHeader(ACCEPT_ENCODING) || undefined,
  };
  // validators only where a cached document is revalidated: OpenAPI and aggregated discovery
  if (path.startsWith('/openapi/') || DISCOVERY_ROOT.test(path))
    headers.ifNoneMatch = req.getHeader('if-none-match') || undefined;
  // connect subresources only: the upgrade and the headers a proxy forwards (uWS headers die with this call)
  if (CONNECT_PATH.test(path)) {
    headers.upgrade = req.getHeader('upgrade') || undefined;
    const all: [string, string][] = [];
    req.forEach((k, v) => {
      all.push([k, v]);
    });
    headers.all = all;
  }
  const r: FilterRequest = {
    x,
    method,
    path,
    query,
    headers,
    credentials: NO_CREDENTIALS,
    impersonation: undefined,
    user: UNSECURED_USER,
    body: undefined,
  };
  x.request = r;
  if (audited) {
    r.remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
    r.auditIdHeader = req.getHeader('audit-id') || undefined;
  }
  return r;
}

/**
 * Called when the uWS handler that received the request returns (answered or not). uWS needs
 * an abort handler on a response left open past its handler, and forbids one on a response
 * already written; a request answered during the handler (a cached GET) so costs no closure
 * and no handle. A response some path ended without marking the exchange done throws here:
 * it needs no abort handler either.
 */
export function leaveHandler(x: Exchange): void {
  x.inHandler = false;
  if (x.done || x.aborted || x.head) return;
  try {
    watchAbort(x);
  } catch {
    // already answered (uWS: "must not be accessed ... after a successful response")
  }
}

function watchAbort(x: Exchange): void {
  x.res.onAborted(() => {
    x.aborted = true;
    x.release?.();
    x.onAbort?.();
  });
}

/**
 * The plain `--port` (off by default, port < 0): loopback only unless `--insecure-bind-address`
 * says otherwise (with a warning), as upstream's old insecure port. Every request goes to handle.
 */
export async function listenPlain(
  host: string,
  port: number,
  handle: (res: HttpResponse, req: HttpRequest) => void,
): Promise<PlainListener> {
  if (port < 0) return { port: 0 };
  if (!isLoopback(host)) {
    process.stderr.write(
      `warning: --insecure-bind-address ${host} is not a loopback address: the plain port serves without authentication or authorization to anyone who can reach it\n`,
    );
  }
  const app = uWS.App();
  app.any('/*', handle);
  return new Promise<PlainListener>((resolve, reject) => {
    app.listen(host, port, (sock) => {
      if (!sock) return void listenError('port', host, port).then(reject);
      resolve({ port: uWS.us_socket_local_port(sock), socket: sock, app });
    });
  });
}
