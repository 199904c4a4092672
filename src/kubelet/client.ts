/**
 * The client of the node agents (upstream pkg/kubelet/client): HTTPS with the server's kubelet
 * client certificate, the agent's serving certificate verified only when
 * `--kubelet-certificate-authority` is given (upstream's default), keep-alive connections pooled
 * per agent by one node:https Agent, and `--kubelet-timeout` bounding the dial and the wait for
 * the response head (never a streamed body: `logs -f` may stay quiet for hours).
 */
import { Agent, request } from 'node:https';
import { Agent as HttpAgent, request as plainRequest } from 'node:http';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import type { KubeletOptions } from './options.js';
import { plainError, type NodeConnection } from './location.js';
import { StatusError, errors } from '../api/status.js';

export interface KubeletTls {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
}

/** What the TLS front needs to dial node agents itself (plain data: it crosses to its thread). */
export interface KubeletDialMaterial {
  cert?: Uint8Array;
  key?: Uint8Array;
  ca?: Uint8Array;
  timeoutMs: number;
}

export interface KubeletRequest {
  method: string;
  /** path and query on the agent */
  path: string;
  headers?: OutgoingHttpHeaders;
  /** upstream insecureSkipTLSVerifyBackend (pods/log) */
  insecure?: boolean;
  /** plain HTTP (nodes/N:port/proxy to a port other than the agent's, pods and services proxies) */
  plain?: boolean;
  /** HTTPS without the client certificate, unverified (pods and services proxies: never show a pod our credential) */
  bare?: boolean;
}

/** A request to an agent, sent when ended. */
export interface KubeletCall {
  /** sends the request with its body (none for a GET) */
  end(body?: Buffer): void;
  /** abandons it (the client went away): no reply is given */
  destroy(): void;
}

/** methods Go's transport replays on a new connection (without a body) */
const REPLAYABLE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
/** how a pooled connection the agent closed while idle fails the next request on it */
const STALE = new Set(['ECONNRESET', 'EPIPE']);

export interface KubeletReply {
  /** the response head arrived */
  response(res: IncomingMessage): void;
  /** the dial or the head failed (the Status upstream answers) */
  error(e: StatusError): void;
}

export function loadKubeletTls(
  o: KubeletOptions,
  defaults: { certFile: string; keyFile: string } | undefined,
): KubeletTls {
  const certFile = o.kubeletClientCertificate || defaults?.certFile;
  const keyFile = o.kubeletClientKey || defaults?.keyFile;
  const read = (flag: string, f: string) => {
    try {
      return readFileSync(f);
    } catch (e) {
      throw new Error(`--${flag}: cannot read ${f}: ${(e as Error).message}`);
    }
  };
  return {
    ...(certFile && keyFile
      ? { cert: read('kubelet-client-certificate', certFile), key: read('kubelet-client-key', keyFile) }
      : {}),
    ...(o.kubeletCertificateAuthority
      ? { ca: read('kubelet-certificate-authority', o.kubeletCertificateAuthority) }
      : {}),
  };
}

export class KubeletClient {
  private readonly verified: Agent;
  private readonly unverified: Agent;
  private readonly bare = new Agent({ keepAlive: true, maxFreeSockets: 16, rejectUnauthorized: false });
  private readonly plain = new HttpAgent({ keepAlive: true, maxFreeSockets: 16 });

  constructor(
    private readonly tls: KubeletTls,
    private readonly timeoutMs: number,
  ) {
    const base = {
      keepAlive: true,
      keepAliveMsecs: 30_000,
      maxFreeSockets: 16,
      ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}),
    };
    this.verified = new Agent({
      ...base,
      ...(tls.ca ? { ca: tls.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }),
    });
    this.unverified = tls.ca ? new Agent({ ...base, rejectUnauthorized: false }) : this.verified;
  }

  get dialMaterial(): KubeletDialMaterial {
    return {
      ...(this.tls.cert ? { cert: this.tls.cert, key: this.tls.key } : {}),
      ...(this.tls.ca ? { ca: this.tls.ca } : {}),
      timeoutMs: this.timeoutMs,
    };
  }

  /** The URL as upstream's error messages show it. */
  static url(c: NodeConnection, path: string, plain = false): string {
    const host = c.host.includes(':') ? `[${c.host}]` : c.host;
    return `${plain ? 'http' : 'https'}://${host}:${c.port}${path}`;
  }

  /**
   * Sends a request to the agent; reply.response gets the head, reply.error a dial or head
   * failure (or the timeout). The caller ends the returned call (with the body, if any).
   * As Go's transport, a request without a body that fails on a pooled connection before any
   * answer (the agent closed it while idle: a reset, an EOF) is sent once more, on a new one.
   */
  send(c: NodeConnection, r: KubeletRequest, reply: KubeletReply): KubeletCall {
    const url = KubeletClient.url(c, r.path, r.plain);
    const verb = r.method === 'GET' ? 'Get' : r.method.charAt(0) + r.method.slice(1).toLowerCase();
    let settled = false;
    let req: ClientRequest | undefined;
    let body: Buffer | undefined;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      req?.destroy();
      reply.error(plainError(`${verb} ${JSON.stringify(url)}: net/http: timeout awaiting response headers`));
    }, this.timeoutMs);
    const attempt = (retried: boolean) => {
      const current = (req = this.request(c, r));
      current.once('response', (res) => {
        clearTimeout(timer);
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        reply.response(res);
      });
      current.on('error', (e: NodeJS.ErrnoException) => {
        if (settled) return;
        if (!retried && current.reusedSocket && !body?.length && REPLAYABLE.has(r.method) && STALE.has(e.code ?? ''))
          return attempt(true);
        clearTimeout(timer);
        settled = true;
        reply.error(plainError(`${verb} ${JSON.stringify(url)}: ${dialMessage(c, e)}`));
      });
      current.end(body);
    };
    return {
      end: (b?: Buffer) => {
        body = b;
        attempt(false);
      },
      destroy: () => {
        settled = true;
        clearTimeout(timer);
        req?.destroy();
      },
    };
  }

  private request(c: NodeConnection, r: KubeletRequest): ClientRequest {
    const opts = { host: c.host, port: c.port, method: r.method, path: r.path, headers: r.headers ?? {} };
    return r.plain
      ? plainRequest({ ...opts, agent: this.plain })
      : request({ ...opts, agent: r.bare ? this.bare : r.insecure ? this.unverified : this.verified });
  }

  close(): void {
    this.verified.destroy();
    this.unverified.destroy();
    this.bare.destroy();
    this.plain.destroy();
  }
}

/** Go's wording of a failed dial, for the errors clients print. */
export function dialMessage(c: NodeConnection, e: NodeJS.ErrnoException): string {
  const addr = `${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ECONNRESET':
      return `read tcp ${addr}: read: connection reset by peer`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${c.host}: no such host`;
    default:
      return e.message;
  }
}

/** Upstream's reason and message per code of a failed agent answer (GenericHttpResponseChecker). */
const AGENT_FAILURES: Record<number, [string, string]> = {
  404: ['NotFound', 'the server could not find the requested resource'],
  403: ['Forbidden', 'the server does not allow access to the requested resource'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: [
    'Timeout',
    'the server was unable to return a response in the time allotted, but may still be processing the request',
  ],
};

/**
 * The Status for a non-2xx answer of the agent (upstream GenericHttpResponseChecker): 500
 * InternalError and 400 BadRequest carry the agent's text, other codes upstream's message.
 */
export function agentResponseError(code: number, text: string, resource: string, name: string): StatusError {
  if (code === 500) return errors.internal(text);
  if (code === 400) return errors.badRequest(text);
  const [reason, message] = AGENT_FAILURES[code] ?? [
    '',
    `the server responded with the status code ${code} but did not return more information`,
  ];
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${message} ( ${resource} ${name})`,
    ...(reason ? { reason } : {}),
    details: { name, kind: resource, causes: [{ reason: 'UnexpectedServerResponse', message: text }] },
    code,
  });
}

/** Collects the first 4 KiB of a failed answer's body (its text goes into the Status). */
export function readAgentError(res: IncomingMessage, done: (text: string) => void, failed: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    if (size < 4096) {
      chunks.push(c);
      size += c.length;
    }
  });
  res.on('error', failed);
  res.on('end', () => done(Buffer.concat(chunks).toString('utf8').slice(0, 4096)));
}
