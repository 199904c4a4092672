/** Small keep-alive HTTP client for set-up traffic and the watch writer (loopback only). */
import http from 'node:http';

export interface Reply {
  status: number;
  text: string;
}

// timeout: a socket left free this long is closed by the agent itself, well before the server's
// own 10 s idle close (uWS), so a request never races the server closing its reused socket
// (`read ECONNRESET` on a PUT, seen against the ceiling and the server alike); a request's own
// timeout below replaces it while the socket is in use
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });

export function request(
  base: string,
  method: string,
  path: string,
  body?: string,
  timeoutMs = 30_000,
  contentType = 'application/json',
): Promise<Reply> {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench traffic stays on loopback, not ${url.hostname}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        timeout: timeoutMs,
        headers: body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Like request, but fails unless the status is one of `ok`. */
export async function expect(
  base: string,
  method: string,
  path: string,
  body: string | undefined,
  ok: number[],
  contentType?: string,
): Promise<Reply> {
  const r = await request(base, method, path, body, undefined, contentType);
  if (!ok.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

/** Runs fn(0..n-1) with at most `concurrency` in flight. */
export async function parallel(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

export function closeAgent(): void {
  agent.destroy();
}

/** A ConfigMap whose JSON is about `bytes` long. */
export function configMapJson(name: string, bytes: number, annotations?: Record<string, string>): string {
  const meta: Record<string, unknown> = { name, labels: { bench: 'true' } };
  if (annotations) meta.annotations = annotations;
  const shell = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { pad: '' } });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta,
    data: { pad: 'x'.repeat(Math.max(0, bytes - shell.length)) },
  });
}

export async function ensureNamespace(base: string, name: string): Promise<void> {
  await expect(
    base,
    'POST',
    '/api/v1/namespaces',
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    [201, 409],
  );
}

/**
 * Bytes the server adds to a ConfigMap it stores (uid, timestamps, managed fields...), found
 * with a probe object that is deleted again; lets scenarios size objects as served.
 */
export async function servedOverhead(base: string, ns: string): Promise<number> {
  const body = configMapJson('size-probe', 1024);
  const r = await expect(base, 'POST', `/api/v1/namespaces/${ns}/configmaps`, body, [201]);
  await expect(base, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/size-probe`, undefined, [200, 202]);
  return Math.max(0, Buffer.byteLength(r.text) - Buffer.byteLength(body));
}
