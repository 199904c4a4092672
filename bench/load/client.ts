/**
 * The bench's HTTP(S) client: keep-alive agents (one pool for requests, one for long-running
 * watches), the target's credentials (kubeconfig CA/client certificate or bearer token), and
 * every request recorded in a Recorder with its verb+resource, status, latency and bytes.
 */
import http from 'node:http';
import https from 'node:https';
import { TargetError } from '../lib/usage-errors.js';
import type { Credentials } from './kubeconfig.js';
import type { OpId, Recorder } from './recorder.js';

export const REQUEST_TIMEOUT_MS = 60_000;
const MUST_ATTEMPTS = 5;

export interface Call extends OpId {
  method: string;
  path: string;
  body?: string | Buffer;
  contentType?: string;
  accept?: string;
  /** not recorded (the bench's own probes) */
  unrecorded?: boolean;
  /** performance.now() at which the request was due (open loop): latency counts from here */
  scheduledAt?: number;
  /**
   * The caller does not use the body (density's cluster LISTs of 322 MB): every byte is still
   * read off the socket and counted, each chunk dropped as it arrives instead of kept and
   * concatenated at the end (the answer's body is then empty).
   */
  discardBody?: boolean;
}

export interface Answer {
  status: number;
  body: Buffer;
  ms: number /** why there was no answer (status 0) */;
  error?: string;
}

export class Client {
  readonly base: URL;
  private readonly agent: http.Agent;
  private readonly watchAgent: http.Agent;
  private readonly auth: Record<string, string>;
  private readonly creds: Credentials;
  recorder: Recorder;

  constructor(server: string, creds: Credentials, concurrency: number, recorder: Recorder) {
    this.base = new URL(server);
    const tls = this.base.protocol === 'https:';
    const opts = {
      keepAlive: true,
      maxSockets: Math.max(1, concurrency),
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
      rejectUnauthorized: !creds.insecure,
    };
    this.agent = tls ? new https.Agent(opts) : new http.Agent(opts);
    this.watchAgent = tls
      ? new https.Agent({ ...opts, keepAlive: false, maxSockets: Infinity })
      : new http.Agent({ keepAlive: false, maxSockets: Infinity });
    this.auth = creds.token ? { authorization: `Bearer ${creds.token}` } : {};
    this.creds = creds;
    this.recorder = recorder;
  }

  /** What another thread needs to open watches on this target as this client. */
  target(path: string): {
    url: string;
    headers: Record<string, string>;
    tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean };
  } {
    const c = this.creds;
    return {
      url: new URL(path, this.base).href,
      headers: { ...this.auth },
      tls: { ca: c.ca, cert: c.cert, key: c.key, rejectUnauthorized: !c.insecure },
    };
  }

  get tls(): boolean {
    return this.base.protocol === 'https:';
  }

  private mod(): typeof http | typeof https {
    return this.tls ? https : http;
  }

  /** Sends one request and records it; never throws for a failed request (status 0). */
  call(c: Call): Promise<Answer> {
    const t0 = c.scheduledAt ?? performance.now();
    const url = new URL(c.path, this.base);
    const headers: Record<string, string | number> = { ...this.auth, accept: c.accept ?? 'application/json' };
    if (c.body !== undefined) {
      headers['content-type'] = c.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(c.body);
    }
    return new Promise((resolve) => {
      let done = false;
      const finish = (status: number, body: Buffer, error?: string, bytes = body.length): void => {
        if (done) return;
        done = true;
        const ms = performance.now() - t0;
        if (!c.unrecorded) this.recorder.record(c, status, ms, bytes);
        resolve({ status, body, ms, error });
      };
      const req = this.mod().request(
        url,
        { method: c.method, agent: this.agent, headers, timeout: REQUEST_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          res.on('data', (d: Buffer) => {
            read += d.length;
            if (!c.discardBody) chunks.push(d);
          });
          res.on('end', () => finish(res.statusCode ?? 0, Buffer.concat(chunks), undefined, read));
          res.on('error', (e) => finish(0, Buffer.alloc(0), e.message));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on('error', (e) => finish(0, Buffer.alloc(0), e.message));
      req.end(c.body);
    });
  }

  /**
   * Like call, but throws unless the status is one of `ok`; returns the parsed JSON body. For
   * set-up traffic: no answer, 429 and 5xx are retried (at most MUST_ATTEMPTS times, backing off).
   */
  async must(c: Call, ok: number[] = [200, 201]): Promise<any> {
    let a = await this.call(c);
    for (
      let attempt = 1;
      attempt < MUST_ATTEMPTS && (a.status === 0 || a.status === 429 || a.status >= 500);
      attempt++
    ) {
      await new Promise((r) => setTimeout(r, 200 * attempt));
      a = await this.call(c);
    }
    if (!ok.includes(a.status))
      throw new Error(
        `${c.method} ${c.path}: ${a.status ? `${a.status} ${a.body.toString('utf8').slice(0, 300)}` : `no answer (${a.error})`}`,
      );
    try {
      return JSON.parse(a.body.toString('utf8'));
    } catch {
      return undefined;
    }
  }

  /**
   * Opens a watch (JSON lines) and calls onEvent for each event, parsed (or the line itself
   * with `raw`, for fan-outs where parsing every event would make the client the bottleneck);
   * resolves when the server ends it or `signal` aborts it, recording it once as a WATCH with
   * its open time.
   */
  watch(
    op: OpId,
    path: string,
    signal: AbortSignal,
    onEvent: (ev: any, at: number) => void,
    onOpen?: (status: number) => void,
    raw = false,
  ): Promise<number> {
    const t0 = performance.now();
    const url = new URL(path, this.base);
    return new Promise((resolve) => {
      let status = 0;
      let bytes = 0;
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        this.recorder.record(op, status, performance.now() - t0, bytes);
        resolve(status);
      };
      const req = this.mod().request(
        url,
        { method: 'GET', agent: this.watchAgent, headers: { ...this.auth, accept: 'application/json' } },
        (res) => {
          status = res.statusCode ?? 0;
          onOpen?.(status);
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            const at = performance.now();
            bytes += Buffer.byteLength(d);
            buf += d;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              if (raw) onEvent(line, at);
              else
                try {
                  onEvent(JSON.parse(line), at);
                } catch {
                  /* a partial or foreign line is not an event */
                }
            }
          });
          res.on('end', finish);
          res.on('close', finish);
          res.on('error', finish);
        },
      );
      const onAbort = (): void => {
        req.destroy();
        finish();
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort);
      req.on('error', finish);
      req.end();
    });
  }

  /** GET /version, not recorded: throws when the server cannot be reached or refuses the credentials. */
  async preflight(): Promise<void> {
    const a = await this.call({ verb: 'GET', resource: '', method: 'GET', path: '/version', unrecorded: true });
    if (a.status === 0) throw new TargetError(`cannot reach ${this.base.origin}: ${a.error}`);
    if (a.status === 401)
      throw new TargetError(
        `${this.base.origin} answered 401 Unauthorized: check --token or the kubeconfig's credentials`,
      );
  }

  /** The server's /metrics text, not recorded (a non-resource request, excluded from comparisons). */
  async metricsText(): Promise<string | undefined> {
    const url = new URL('/metrics', this.base);
    return new Promise((resolve) => {
      const req = this.mod().request(
        url,
        { agent: this.agent, headers: { ...this.auth, accept: 'text/plain' }, timeout: 10_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : undefined));
          res.on('error', () => resolve(undefined));
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(undefined));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }
}
