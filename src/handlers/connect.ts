/**
 * The connect subresources that reach past the API server (upstream pkg/registry/core/{pod,node,service}/rest):
 * pods/log (a stream from the node agent's containerLogs, handed to the TLS front when it took
 * the connection over, else streamed here), pods/exec|attach|portforward (an
 * upgrade handed to the TLS front, which pipes it to the agent), and the proxies pods/proxy,
 * services/proxy (a ready endpoint) and nodes/proxy (the agent). Authorization of the
 * subresource ran in the filter chain. Bodies are streamed through with backpressure: a
 * response chunk goes to uWS as it arrives, and the agent's stream pauses while uWS is full.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { StatusError, errors, toStatus } from '../api/status.js';
import { sendStatus, send, readBody, statusLine, writeChunk, type Exchange } from '../http/exchange.js';
import type { Request, Services } from '../http/context.js';
import { typeKeyOf } from '../actors/routing.js';
import { getCore } from '../actors/get-core.js';
import { CLIENT_IDENTITY_HEADER } from '../auth/x509.js';
import { type KubeletClient, agentResponseError, readAgentError, type KubeletRequest } from '../kubelet/client.js';
import {
  logOptions,
  logPath,
  nodeConnection,
  podProxyTarget,
  serviceProxyTarget,
  splitSchemeNamePort,
  streamPath,
  validateContainer,
  type NodeConnection,
  type NodeLike,
  type PodLike,
} from '../kubelet/location.js';
import { UPGRADE_DIRECTIVE_HEADER, type UpgradeTarget } from '../kubelet/upgrade-directive.js';
import { ownValue, setOwn } from '../api/own-keys.js';

export const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

export interface ConnectDeps {
  kubelet: KubeletClient;
  preferredAddressTypes: readonly string[];
  kubeletPort: number;
  maxRequestBodyBytes: number;
  /** the stored object (404 Status when absent) */
  getObject(resource: 'pods' | 'nodes' | 'services' | 'endpoints', namespace: string, name: string): Promise<unknown>;
  /** writes the head that hands an upgrade to the TLS front (or the error without one) */
  upgrade(x: Exchange, t: UpgradeTarget): void;
  /** whether the TLS front took the request's connection over (then it can stream a pods/log itself) */
  handsOff(x: Exchange): boolean;
  /** proxies may target loopback addresses (tests on one machine; upstream never) */
  allowLoopbackProxy: boolean;
  /** whether the agent's serving certificate is verified (--kubelet-certificate-authority) */
  verifiesAgents: boolean;
}

/** Whether the request is a connect subresource served here. */
export function isConnect(r: Request): boolean {
  const { resource, subresource } = r.info;
  if (r.def.group !== '' || !CONNECT_SUBRESOURCES.has(subresource)) return false;
  return resource === 'pods' || (subresource === 'proxy' && (resource === 'nodes' || resource === 'services'));
}

export function serveConnect(r: Request, d: ConnectDeps): void {
  connect(r, d).catch((e: unknown) => sendStatus(r.x, toStatus(e), r.enc.pretty, r.enc));
}

async function connect(r: Request, d: ConnectDeps): Promise<void> {
  const { info } = r;
  if (info.resource === 'pods') {
    const id =
      info.subresource === 'proxy' ? splitSchemeNamePort(info.name) : { scheme: '', name: info.name, port: '' };
    const pod = (await d.getObject('pods', info.namespace, id.name)) as PodLike;
    switch (info.subresource) {
      case 'log':
        return podLog(r, d, pod);
      case 'proxy': {
        const t = podProxyTarget(pod, id.port, d.allowLoopbackProxy);
        return proxy(
          r,
          d,
          { host: t.host, port: t.port },
          { method: methodOf(r), path: '', plain: id.scheme !== 'https', bare: true },
        );
      }
      default:
        return stream(r, d, pod, info.subresource as 'exec' | 'attach' | 'portforward');
    }
  }
  const id = splitSchemeNamePort(info.name);
  if (info.resource === 'nodes') {
    const node = (await d.getObject('nodes', '', id.name)) as NodeLike;
    const c = nodeConnection(node, d.preferredAddressTypes, d.kubeletPort);
    // upstream: a port other than the agent's is reached over plain HTTP on the node's address
    const other = id.port !== '' && Number(id.port) !== c.port;
    return proxy(r, d, other ? { host: c.host, port: Number(id.port) } : c, {
      method: methodOf(r),
      path: '',
      plain: other || id.scheme === 'http',
    });
  }
  const svc = (await d.getObject('services', info.namespace, id.name)) as Parameters<typeof serviceProxyTarget>[1];
  const eps = (await d.getObject('endpoints', info.namespace, id.name).catch((e: unknown) => {
    if (e instanceof StatusError && e.code === 404) return undefined;
    throw e;
  })) as Parameters<typeof serviceProxyTarget>[2];
  const t = serviceProxyTarget(id.name, svc, eps, id.port, d.allowLoopbackProxy, (n) => Math.floor(Math.random() * n));
  return proxy(r, d, t, { method: methodOf(r), path: '', plain: id.scheme !== 'https', bare: true });
}

function methodOf(r: Request): string {
  const m = r.x.request?.method;
  return (
    m ??
    ({ get: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' } as Record<string, string>)[
      r.info.verb
    ] ??
    'GET'
  );
}

/** pods/log: the container's log from its node agent (empty while the pod has no node, as upstream). */
async function podLog(r: Request, d: ConnectDeps, pod: PodLike): Promise<void> {
  const o = logOptions(pod.metadata.name, r.query);
  const container = validateContainer(o.container, pod);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return send(r.x, 200, 'text/plain', '');
  const c = nodeConnection(
    (await d.getObject('nodes', '', nodeName)) as NodeLike,
    d.preferredAddressTypes,
    d.kubeletPort,
  );
  const path = logPath(pod, container, o);
  if (d.handsOff(r.x)) {
    // the TLS front asks the agent and streams the log straight to the client socket: no
    // hop through this thread and uWS (src/auth/log-stream.ts)
    r.x.release?.();
    return d.upgrade(r.x, {
      host: c.host,
      port: c.port,
      path,
      insecure: o.insecureSkipTLSVerifyBackend || !d.verifiesAgents,
      log: { pod: pod.metadata.name },
    });
  }
  const req = d.kubelet.send(
    c,
    { method: 'GET', path, insecure: o.insecureSkipTLSVerifyBackend },
    {
      response: (res) => {
        if ((res.statusCode ?? 500) < 200 || (res.statusCode ?? 500) > 206)
          return failedResponse(r, res, 'pods/log', pod.metadata.name);
        streamResponse(r.x, res, 200, [], 'text/plain');
      },
      error: (e) => sendStatus(r.x, e.status, r.enc.pretty, r.enc),
    },
  );
  r.x.onAbort = () => req.destroy();
  req.end();
}

/** A non-2xx answer of the agent becomes upstream's Status (see agentResponseError). */
function failedResponse(r: Request, res: IncomingMessage, resource: string, name: string): void {
  readAgentError(
    res,
    (text) =>
      sendStatus(r.x, agentResponseError(res.statusCode ?? 500, text, resource, name).status, r.enc.pretty, r.enc),
    () => {
      if (!r.x.aborted) r.x.res.close();
    },
  );
}

/** exec/attach/portforward: an upgrade the TLS front takes over (upstream UpgradeAwareHandler). */
async function stream(
  r: Request,
  d: ConnectDeps,
  pod: PodLike,
  kind: 'exec' | 'attach' | 'portforward',
): Promise<void> {
  const path = streamPath(kind, pod, r.query);
  const c = nodeConnection(
    (await d.getObject('nodes', '', pod.spec!.nodeName!)) as NodeLike,
    d.preferredAddressTypes,
    d.kubeletPort,
  );
  if (!r.headers.upgrade) throw errors.badRequest('Upgrade request required');
  r.x.release?.();
  d.upgrade(r.x, { host: c.host, port: c.port, path, insecure: !d.verifiesAgents });
}

/** Request headers never forwarded by a proxy: hop-by-hop, credentials, the server's own. */
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'content-length',
  CLIENT_IDENTITY_HEADER,
]);
const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
  'date',
  'content-type',
  UPGRADE_DIRECTIVE_HEADER,
]);

/** The part of the request path after the `proxy` segment ('' when none). */
export function proxySuffix(path: string, resource: string): { prefix: string; rest: string } {
  const segs = path.split('/');
  const k = segs.findIndex((s, i) => s === 'proxy' && i >= 2 && segs[i - 2] === resource);
  if (k < 0) return { prefix: path, rest: '' };
  const rest = segs.slice(k + 1).join('/');
  return { prefix: segs.slice(0, k + 1).join('/'), rest: k + 1 < segs.length ? `/${rest}` : '' };
}

/** Proxies one HTTP request (upstream UpgradeAwareHandler without upgrade, proxy.Transport headers). */
function proxy(r: Request, d: ConnectDeps, c: NodeConnection, base: KubeletRequest): void {
  const { prefix, rest } = proxySuffix(r.info.path, r.info.resource);
  const q = r.query.toString();
  const headers: OutgoingHttpHeaders = {};
  let host = '';
  for (const [k, v] of r.headers.all ?? []) {
    if (k === 'host') host = v;
    if (DROP_REQUEST.has(k) || k.startsWith('impersonate-') || k.startsWith('x-remote-')) continue;
    // header names are the client's: own keys only (a `__proto__` header is a header)
    const prev = ownValue(headers, k) as OutgoingHttpHeaders[string];
    setOwn(headers, k, prev === undefined ? v : [...(Array.isArray(prev) ? prev : [String(prev)]), v]);
  }
  headers['x-forwarded-uri'] = prefix + rest;
  if (host) headers['x-forwarded-host'] = host;
  headers['x-forwarded-proto'] = 'https';
  const go = (body?: Buffer) => {
    if (body?.length) headers['content-length'] = String(body.length);
    const req = d.kubelet.send(
      c,
      { ...base, path: (rest || '/') + (q ? `?${q}` : ''), headers },
      {
        response: (res) => {
          const out: [string, string][] = [];
          for (const [k, v] of Object.entries(res.headers)) {
            if (DROP_RESPONSE.has(k) || v === undefined) continue;
            for (const one of Array.isArray(v) ? v : [v])
              out.push([k, k === 'location' ? rewriteLocation(one, c, host, prefix) : one]);
          }
          streamResponse(r.x, res, res.statusCode ?? 502, out, String(res.headers['content-type'] ?? ''));
        },
        error: (e) =>
          sendStatus(
            r.x,
            errors.serviceUnavailable(`error trying to reach service: ${e.message.replace(/^\w+ "[^"]*": /, '')}`)
              .status,
            r.enc.pretty,
            r.enc,
          ),
      },
    );
    r.x.onAbort = () => req.destroy();
    req.end(body);
  };
  if (r.headers.contentLength === 0 && !r.body) return go();
  const read =
    r.body ??
    ((done: (b: Buffer) => void, fail: (s: ReturnType<typeof toStatus>) => void) =>
      readBody(r.x, d.maxRequestBodyBytes, r.headers.contentLength, done, fail));
  read(go, (st) => sendStatus(r.x, st));
}

/** Upstream proxy.Transport: a redirect to the backend itself points back through the proxy path. */
function rewriteLocation(location: string, c: NodeConnection, host: string, prefix: string): string {
  try {
    const u = new URL(location, 'http://placeholder.invalid');
    const own = u.host === 'placeholder.invalid' || u.hostname.replace(/^\[|\]$/g, '') === c.host;
    if (!own || !host) return location;
    return `https://${host}${prefix}${u.pathname}${u.search}${u.hash}`;
  } catch {
    return location;
  }
}

/**
 * Streams a backend response to the client as it arrives (chunked, no buffering on this
 * thread): the backend pauses while uWS holds unsent bytes, and resumes when it drained.
 */
export function streamResponse(
  x: Exchange,
  res: IncomingMessage,
  code: number,
  headers: [string, string][],
  contentType: string,
): void {
  if (x.aborted || x.done) {
    res.destroy();
    return;
  }
  x.done = true;
  x.release?.();
  x.observer?.streamOpened(x);
  x.audit?.started();
  x.res.cork(() => {
    x.res.writeStatus(statusLine(code));
    if (contentType) x.res.writeHeader('Content-Type', contentType);
    for (const [k, v] of [...x.headers, ...headers]) x.res.writeHeader(k, v);
  });
  x.onAbort = () => res.destroy();
  res.on('data', (chunk: Buffer) => {
    if (x.aborted) return;
    if (!writeChunk(x.res, chunk)) {
      // uWS keeps what it could not send; once an onWritable handler is set it no longer drains
      // that backlog by itself: an empty cork does (uncork writes the backlog first), then the
      // agent resumes. A write that still finds a backlog pauses it again.
      res.pause();
      x.res.onWritable(() => {
        x.res.cork(() => {});
        res.resume();
        return true;
      });
    }
  });
  let closed = false;
  const close = (clean: boolean) => {
    if (closed) return;
    closed = true;
    x.observer?.streamClosed(x);
    x.audit?.complete(code);
    if (x.aborted) return;
    if (clean) x.res.cork(() => x.res.end());
    else x.res.close();
  };
  res.on('end', () => close(true));
  res.on('error', () => close(false));
  res.on('close', () => close(res.complete));
}

/**
 * The stored core/v1 object on the front thread: from the read cache (current with every
 * acknowledged write), else from its actor (a shared etcd store, or a miss).
 */
export async function getCoreObject(s: Services, resource: string, namespace: string, name: string): Promise<unknown> {
  if (s.readCache.servesGets) {
    const json = s.readCache.get(typeKeyOf('', resource), namespace, name, 'v1');
    if (json !== undefined) return JSON.parse(json) as unknown;
  }
  return getCore(s.pool, resource, namespace, name);
}
