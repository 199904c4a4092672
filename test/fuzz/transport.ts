/**
 * Sends one planned request with node:http (paths exactly as given: no URL normalisation, so
 * dot segments and bad escapes reach the server), with a hard time limit; watches are cut by
 * the client if the server has not ended them a few seconds after the response started.
 */
import http from 'node:http';
import net from 'node:net';
import type { HttpReply } from './check.js';

export interface Outgoing {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  watch: boolean;
}

export type Sent =
  | { ok: true; reply: HttpReply; ms: number; retried: boolean }
  | { ok: false; error: string; hang: boolean; ms: number; retried: boolean };

/** the server must end a timeoutSeconds=1 watch well within this (504 waits for a too-large version take 3 s) */
export const WATCH_CUT_MS = 5_000;
export const REQUEST_LIMIT_MS = 20_000;
const MAX_BODY = 96 * 1024 * 1024;

export class Transport {
  private readonly agent: http.Agent;

  constructor(
    private readonly host: string,
    private readonly port: number,
    sockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  async send(o: Outgoing): Promise<Sent> {
    if (o.method === 'HEAD') return this.head(o);
    // a write never goes over a reused connection: a retry after a reuse race could apply it twice
    if (o.method !== 'GET') return this.once(o, false);
    const first = await this.once(o, this.agent);
    // a kept-alive socket the server closed just as it was reused: try once on a fresh connection
    if (!first.ok && first.reused && !first.hang) return { ...(await this.once(o, false)), retried: true };
    return first;
  }

  private once(o: Outgoing, agent: http.Agent | false): Promise<Sent & { reused?: boolean }> {
    const started = Date.now();
    return new Promise((resolve) => {
      let settled = false;
      const done = (s: Sent & { reused?: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(hard);
        clearTimeout(cut);
        resolve(s);
      };
      let cut: NodeJS.Timeout | undefined;
      let req: http.ClientRequest;
      // node:http frames a DELETE/OPTIONS body only when told its length
      const headers = o.body?.length ? { ...o.headers, 'content-length': String(o.body.length) } : o.headers;
      try {
        req = http.request({
          host: this.host,
          port: this.port,
          method: o.method,
          path: o.target,
          headers,
          agent,
          setHost: true,
        });
      } catch (e) {
        // the client library refused the request (e.g. a header it will not send): not the server's fault
        resolve({ ok: false, error: `client refused: ${(e as Error).message}`, hang: false, ms: 0, retried: false });
        return;
      }
      const hard = setTimeout(() => {
        req.destroy();
        done({
          ok: false,
          error: `no complete response within ${REQUEST_LIMIT_MS} ms`,
          hang: true,
          ms: Date.now() - started,
          retried: false,
        });
      }, REQUEST_LIMIT_MS);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let abortedByClient = false;
        const finish = () =>
          done({
            ok: true,
            ms: Date.now() - started,
            retried: false,
            reply: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), abortedByClient },
          });
        if (o.watch && res.statusCode === 200) {
          cut = setTimeout(() => {
            abortedByClient = true;
            res.destroy();
            finish();
          }, WATCH_CUT_MS);
        }
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size <= MAX_BODY) chunks.push(d);
        });
        res.on('end', finish);
        res.on('error', (e) => {
          if (abortedByClient) return finish();
          done({
            ok: false,
            error: `response: ${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`,
            hang: false,
            ms: Date.now() - started,
            retried: false,
          });
        });
        res.on('close', () => {
          if (!res.complete && !abortedByClient)
            done({
              ok: false,
              error: 'response closed before it was complete',
              hang: false,
              ms: Date.now() - started,
              retried: false,
            });
        });
      });
      req.on('error', (e) =>
        done({
          ok: false,
          error: `${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`,
          hang: false,
          ms: Date.now() - started,
          retried: false,
          reused: req.reusedSocket,
        }),
      );
      req.end(o.body);
    });
  }

  /**
   * HEAD goes over its own connection, followed there by `GET /livez` once the HEAD answer's
   * headers are in: whatever arrives between the two header blocks is a body the HEAD answer
   * must not have (`headBodyBytes`). No timing involved, and the pooled connections stay sane.
   */
  private head(o: Outgoing): Promise<Sent> {
    const started = Date.now();
    const host = `Host: ${this.host}:${this.port}\r\n`;
    const text = `HEAD ${o.target} HTTP/1.1\r\n${host}${Object.entries(o.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    return new Promise((resolve) => {
      const sock = net.connect({ host: this.host, port: this.port });
      let buf = Buffer.alloc(0);
      let error = '';
      let followed = false;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(hard);
        sock.destroy();
        const end = buf.indexOf('\r\n\r\n');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(buf.subarray(0, 20).toString('latin1'));
        if (end < 0 || !m)
          return resolve({
            ok: false,
            error: error || `no HEAD response (${buf.length} bytes)`,
            hang: error.startsWith('no end'),
            ms: Date.now() - started,
            retried: false,
          });
        const headers: Record<string, string> = {};
        for (const l of buf.subarray(0, end).toString('latin1').split('\r\n').slice(1)) {
          const i = l.indexOf(':');
          if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const next = buf.indexOf('HTTP/1.', end + 4);
        const body = buf.subarray(end + 4, next < 0 ? buf.length : next);
        resolve({
          ok: true,
          ms: Date.now() - started,
          retried: false,
          reply: { status: Number(m[1]), headers, body, headBodyBytes: body.length },
        });
      };
      const hard = setTimeout(() => {
        error = `no end of the HEAD response within ${REQUEST_LIMIT_MS} ms`;
        finish();
      }, REQUEST_LIMIT_MS);
      sock.on('connect', () => sock.write(Buffer.from(text, 'latin1')));
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const end = buf.indexOf('\r\n\r\n');
        if (end >= 0 && !followed) {
          followed = true;
          sock.write(`GET /livez HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
        }
        const next = end < 0 ? -1 : buf.indexOf('HTTP/1.', end + 4);
        if (next >= 0 && buf.indexOf('\r\n\r\n', next) >= 0) finish();
      });
      sock.on('error', (e) => {
        error = `${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`;
      });
      sock.on('close', finish);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
