/**
 * The aggregation layer's proxy (upstream kube-aggregator proxyHandler): a request under
 * `/apis/<group>/<version>` of a remote APIService goes, after authentication and
 * authorization, to the extension server behind its service, with the requester in
 * `X-Remote-User`, `X-Remote-Group` and `X-Remote-Extra-<key>` (the authenticating-proxy
 * headers), the caller's credentials removed and the server's proxy client certificate
 * presented. Protobuf is not offered there: an Accept naming only Protobuf is a 406, a Protobuf
 * body a 415. Replies stream through as they come, with backpressure: the extension server's
 * response is paused while the client's socket is full, so a large body is never held whole
 * (issue 26 item 5). An unavailable APIService or an unreachable server is a 503. A request
 * other than a watch is bounded by `--request-timeout` (shortened by a `timeout` parameter), as
 * upstream's timeout filter bounds it: no reply by then is a 504 Timeout Status; a reply still
 * streaming then is cut off (the connection is closed, as upstream aborts the handler).
 */
import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { errors, toStatus } from '../api/status.js';
import type { FilterRequest } from '../http/filter-request.js';
import { readBody, sendStatus, statusLine } from '../http/exchange.js';
import type { Status } from '../api/status.js';
import { parseDuration } from '../api/duration.js';
import { mayHaveBody } from '../filters/body.js';
import type { ApiServices, RemoteService } from './apiservices.js';
import { tlsOptions, type TlsMaterial } from './transport.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
  'date',
]);

export class AggregatorProxy {
  /** requestTimeoutMs: `--request-timeout` (0: none) */
  constructor(
    private readonly apiServices: ApiServices,
    private readonly tls: TlsMaterial,
    private readonly maxBody: number,
    private readonly requestTimeoutMs = 0,
  ) {}

  /** The remote APIService that serves a path (`/apis/<group>/<version>` and below). */
  claims(path: string): RemoteService | undefined {
    // hot path (every request): the core group's paths are never claimed, so nothing is split for them
    if (!path.startsWith('/apis/')) return undefined;
    const segs = path.split('/', 4);
    if (segs[1] !== 'apis' || !segs[2] || !segs[3]) return undefined;
    return this.apiServices.remoteFor(segs[2], segs[3]);
  }

  proxy(r: FilterRequest, s: RemoteService): void {
    const { x } = r;
    try {
      const accept = withoutProtobuf(r.headers.accept);
      if (contentTypeIsProtobuf(r.headers.contentType))
        throw errors.unsupportedMediaType(r.headers.contentType!, ['application/json', 'application/yaml']);
      if (!s.available) throw errors.serviceUnavailable('service unavailable');
      const target = this.apiServices.resolve(s);
      if ('reason' in target) throw errors.serviceUnavailable(target.message);
      const opts: RequestOptions = {
        method: r.method,
        host: target.address.host.replace(/^\[|\]$/g, ''),
        port: target.address.port,
        path: r.path + (r.query.size ? `?${r.query.toString()}` : ''),
        headers: this.headers(r, accept),
        ...tlsOptions({
          ...this.tls,
          ...(s.caBundle ? { ca: s.caBundle } : {}),
          servername: target.address.servername,
          insecure: s.insecureSkipTLSVerify,
        }),
      };
      const limitMs = isWatch(r) ? 0 : timeoutMs(r.query.get('timeout'), this.requestTimeoutMs);
      const deadline = limitMs > 0 ? Date.now() + limitMs : 0;
      const go = (body?: Buffer) => this.forward(r, s, opts, deadline, body);
      if (!mayHaveBody(r.method)) return go();
      const read =
        r.body ??
        ((done: (b: Buffer) => void, fail: (st: Status) => void) =>
          readBody(x, this.maxBody, r.headers.contentLength, done, fail));
      read(go, (st) => sendStatus(x, st));
    } catch (e) {
      sendStatus(x, toStatus(e));
    }
  }

  private headers(r: FilterRequest, accept: string | undefined): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = {};
    if (accept) h.accept = accept;
    if (r.headers.contentType) h['content-type'] = r.headers.contentType;
    if (r.headers.userAgent) h['user-agent'] = r.headers.userAgent;
    const u = r.user;
    if (u) {
      h['X-Remote-User'] = u.username;
      if (u.groups.length) h['X-Remote-Group'] = [...u.groups];
      for (const [k, v] of Object.entries(u.extra ?? {})) h[`X-Remote-Extra-${encodeURIComponent(k)}`] = [...v];
    }
    return h;
  }

  /** Sends the request on; a deadline (ms since the epoch, 0 for none) bounds it and its reply. */
  private forward(r: FilterRequest, s: RemoteService, opts: RequestOptions, deadline: number, body?: Buffer): void {
    const { x } = r;
    let res: IncomingMessage | undefined;
    let timer: NodeJS.Timeout | undefined;
    const req = request(
      { ...opts, headers: { ...opts.headers, ...(body ? { 'content-length': String(body.length) } : {}) } },
      (m) => {
        res = m;
        this.reply(r, m, () => clearTimeout(timer));
      },
    );
    req.on('error', (e) => {
      clearTimeout(timer);
      if (x.done || x.aborted) return;
      this.apiServices.recheck(s.name);
      sendStatus(x, errors.serviceUnavailable(`error trying to reach service: ${e.message}`).status);
    });
    if (deadline > 0) {
      timer = setTimeout(
        () => {
          // a reply already under way cannot become a 504: the connection is closed instead
          if (x.done) {
            if (!x.aborted) x.res.close();
          } else sendStatus(x, timeoutStatus());
          res?.destroy();
          req.destroy();
        },
        Math.max(0, deadline - Date.now()),
      );
    }
    x.onAbort = () => {
      clearTimeout(timer);
      res?.destroy();
      req.destroy();
    };
    req.end(body);
  }

  /**
   * Streams the extension server's reply to the client: status and headers first, then the body
   * as it arrives, pausing the reply while the client's socket is full. A watch gives its
   * in-flight seat back when it starts (long-running); any other request holds it to the end.
   */
  private reply(r: FilterRequest, res: IncomingMessage, ended: () => void): void {
    const { x } = r;
    if (x.aborted || x.done) {
      res.destroy();
      return;
    }
    const code = res.statusCode ?? 502;
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    const watch = isWatch(r);
    x.done = true;
    if (watch) {
      x.release?.();
      x.observer?.streamOpened(x);
    } else x.observer?.responded(x, code);
    x.res.cork(() => {
      x.res.writeStatus(statusLine(code)).writeHeader('Content-Type', contentType);
      for (const [k, v] of [...x.headers, ...passedHeaders(res)]) x.res.writeHeader(k, v);
    });
    res.on('data', (c: Buffer) => {
      if (x.aborted) return;
      let ok = true;
      x.res.cork(() => {
        ok = x.res.write(c);
      });
      if (ok) return;
      // uWS keeps what it could not send; take no more until the socket has drained
      res.pause();
      x.res.onWritable(() => {
        res.resume();
        return true;
      });
    });
    res.on('end', () => {
      ended();
      if (watch) x.observer?.streamClosed(x);
      else {
        x.release?.();
        x.audit?.complete(code, undefined, contentType);
      }
      if (!x.aborted) x.res.cork(() => x.res.end());
    });
    res.on('error', () => {
      ended();
      if (watch) x.observer?.streamClosed(x);
      else x.release?.();
      if (!x.aborted) x.res.close();
    });
  }
}

/** The reply's headers that are passed on (not hop-by-hop; Content-Type is written separately). */
function passedHeaders(res: IncomingMessage): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(res.headers)) {
    if (HOP_BY_HOP.has(k) || k === 'content-type' || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.push([k, one]);
  }
  return out;
}

function isWatch(r: FilterRequest): boolean {
  return r.query.get('watch') === 'true' || r.query.get('watch') === '1' || r.path.includes('/watch/');
}

/** The request's time limit in ms (0: none): `--request-timeout`, shortened by a valid `timeout` parameter. */
function timeoutMs(param: string | null, requestTimeoutMs: number): number {
  const asked = param ? parseDuration(param) : undefined;
  if (asked !== undefined && asked > 0 && (requestTimeoutMs <= 0 || asked < requestTimeoutMs)) return asked;
  return requestTimeoutMs;
}

/** upstream's timeout filter (WithTimeoutForNonLongRunningRequests): NewTimeoutError's Status, details empty */
function timeoutStatus(): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Timeout: request did not complete within the allotted timeout',
    reason: 'Timeout',
    details: {},
    code: 504,
  };
}

function withoutProtobuf(accept: string | undefined): string | undefined {
  if (!accept) return accept;
  const kept = accept
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p && !/protobuf/i.test(p.split(';')[0]!));
  if (kept.length === 0)
    throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml');
  return kept.join(', ');
}

function contentTypeIsProtobuf(ct: string | undefined): boolean {
  return !!ct && /protobuf/i.test(ct.split(';')[0]!);
}
