/**
 * The aggregation layer's proxy (upstream kube-aggregator proxyHandler): a request under
 * `/apis/<group>/<version>` of a remote APIService goes, after authentication and
 * authorization, to the extension server behind its service, with the requester in
 * `X-Remote-User`, `X-Remote-Group` and `X-Remote-Extra-<key>` (the authenticating-proxy
 * headers), the caller's credentials removed and the server's proxy client certificate
 * presented. Protobuf is not offered there: an Accept naming only Protobuf is a 406, a Protobuf
 * body a 415. Replies are passed through (watches streamed as they come); an unavailable
 * APIService or an unreachable server is a 503.
 */
import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { errors, toStatus } from '../api/status.js';
import type { FilterRequest } from '../filters/chain.js';
import { readBody, send, sendStatus, statusLine } from '../http/exchange.js';
import { mayHaveBody } from '../filters/body.js';
import type { ApiServices, RemoteService } from './apiservices.js';
import { tlsOptions, type TlsMaterial } from './transport.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection', 'te', 'trailer', 'date']);

export class AggregatorProxy {
  constructor(private readonly apiServices: ApiServices, private readonly tls: TlsMaterial, private readonly maxBody: number) {}

  /** The remote APIService that serves a path (`/apis/<group>/<version>` and below). */
  claims(path: string): RemoteService | undefined {
    const segs = path.split('/', 4);
    if (segs[1] !== 'apis' || !segs[2] || !segs[3]) return undefined;
    return this.apiServices.remoteFor(segs[2], segs[3]);
  }

  proxy(r: FilterRequest, s: RemoteService): void {
    const { x } = r;
    try {
      const accept = withoutProtobuf(r.headers.accept);
      if (contentTypeIsProtobuf(r.headers.contentType)) throw errors.unsupportedMediaType(r.headers.contentType!, ['application/json', 'application/yaml']);
      if (!s.available) throw errors.serviceUnavailable('service unavailable');
      const target = this.apiServices.resolve(s);
      if ('reason' in target) throw errors.serviceUnavailable(target.message);
      const opts: RequestOptions = {
        method: r.method, host: target.address.host.replace(/^\[|\]$/g, ''), port: target.address.port,
        path: r.path + (r.query.size ? `?${r.query.toString()}` : ''),
        headers: this.headers(r, accept),
        ...tlsOptions({ ...this.tls, ...(s.caBundle ? { ca: s.caBundle } : {}), servername: target.address.servername, insecure: s.insecureSkipTLSVerify }),
      };
      const go = (body?: Buffer) => this.forward(r, s, opts, body);
      if (!mayHaveBody(r.method)) return go();
      const read = r.body ?? ((done: (b: Buffer) => void, fail: (st: any) => void) => readBody(x, this.maxBody, r.headers.contentLength, done, fail));
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

  private forward(r: FilterRequest, s: RemoteService, opts: RequestOptions, body?: Buffer): void {
    const { x } = r;
    const req = request({ ...opts, headers: { ...opts.headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => this.reply(r, res));
    req.on('error', (e) => {
      this.apiServices.recheck(s.name);
      if (!x.done) sendStatus(x, errors.serviceUnavailable(`error trying to reach service: ${e.message}`).status);
    });
    x.onAbort = () => req.destroy();
    req.end(body);
  }

  private reply(r: FilterRequest, res: IncomingMessage): void {
    const { x } = r;
    const code = res.statusCode ?? 502;
    const headers: [string, string][] = [];
    for (const [k, v] of Object.entries(res.headers)) {
      if (HOP_BY_HOP.has(k) || k === 'content-type' || v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.push([k, one]);
    }
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    const streaming = r.query.get('watch') === 'true' || r.query.get('watch') === '1' || r.path.includes('/watch/');
    if (!streaming) {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { x.headers.push(...headers); send(x, code, contentType, Buffer.concat(chunks)); });
      res.on('error', () => { if (!x.aborted && !x.done) x.res.close(); });
      return;
    }
    if (x.aborted || x.done) { res.destroy(); return; }
    x.done = true;
    x.release?.();
    x.observer?.streamOpened(x);
    x.res.cork(() => {
      x.res.writeStatus(statusLine(code)).writeHeader('Content-Type', contentType);
      for (const [k, v] of [...x.headers, ...headers]) x.res.writeHeader(k, v);
    });
    x.onAbort = () => res.destroy();
    res.on('data', (c: Buffer) => { if (!x.aborted) x.res.cork(() => { x.res.write(c); }); });
    const end = () => {
      x.observer?.streamClosed(x);
      if (!x.aborted) x.res.cork(() => x.res.end());
    };
    res.on('end', end);
    res.on('error', () => { if (!x.aborted) x.res.close(); });
  }
}

function withoutProtobuf(accept: string | undefined): string | undefined {
  if (!accept) return accept;
  const kept = accept.split(',').map((p) => p.trim()).filter((p) => p && !/protobuf/i.test(p.split(';')[0]!));
  if (kept.length === 0) throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml');
  return kept.join(', ');
}

function contentTypeIsProtobuf(ct: string | undefined): boolean {
  return !!ct && /protobuf/i.test(ct.split(';')[0]!);
}
