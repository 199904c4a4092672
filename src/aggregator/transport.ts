/**
 * HTTPS to extension API servers: the server's proxy client certificate, the APIService's CA
 * (or none with insecureSkipTLSVerify), the service's TLS server name.
 */
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface TlsMaterial {
  cert?: Buffer;
  key?: Buffer;
}
export interface Dial extends TlsMaterial {
  ca?: string;
  servername?: string;
  insecure?: boolean;
}

export function loadProxyClient(certFile: string, keyFile: string): TlsMaterial {
  return certFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : {};
}

export function tlsOptions(d: Dial): RequestOptions {
  return {
    ...(d.cert ? { cert: d.cert, key: d.key } : {}),
    ...(d.ca ? { ca: d.ca } : {}),
    ...(d.servername ? { servername: d.servername } : {}),
    rejectUnauthorized: !d.insecure,
    agent: false,
  };
}

/** GETs url and parses a 2xx JSON reply; rejects with a short reason otherwise. */
export function fetchJson(url: string, d: Dial, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers: { accept: 'application/json' }, ...tlsOptions(d), timeout: timeoutMs },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299)
            return reject(new Error(`bad status from ${url}: ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (e) {
            reject(e as Error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', reject);
    req.end();
  });
}
