/**
 * Stand-in uWS request and response objects for one POST, as uWS hands it over (the body in one
 * onData chunk, a later turn than the request), and a driver keeping `concurrency` such creates in
 * flight through a handler chain's plain entry: the in-process benches (front-create,
 * front-pods-memory) drive the real pipeline this way without sockets.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';

/** An integer flag `name <n>` from the command line, in 1..max (fallback when absent). */
export function intFlag(name: string, fallback: number, max: number): number {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name} must be an integer in 1..${max}`);
  return v;
}

/** One request as uWS hands it over: the body in one onData chunk, a later turn than the request. */
export interface FakeRequest {
  method: string;
  path: string;
  query?: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Stand-ins for one request; `answered` gets the status line when the handler ends the reply. */
export function fakeRequest(
  r: FakeRequest,
  answered: (status: string) => void,
): { res: HttpResponse; req: HttpRequest } {
  let status = '';
  const res = {
    onAborted: () => res,
    onData(fn: (ab: ArrayBuffer, isLast: boolean) => void) {
      const ab = new ArrayBuffer(r.body.length);
      r.body.copy(Buffer.from(ab));
      // uWS delivers the body in a later turn than the request
      setImmediate(() => fn(ab, true));
      return res;
    },
    onWritable: () => res,
    cork(fn: () => void) {
      fn();
      return res;
    },
    writeStatus(s: string) {
      status = s;
      return res;
    },
    writeHeader: () => res,
    end() {
      answered(status);
      return res;
    },
    endWithoutBody() {
      answered(status);
      return res;
    },
    getRemoteAddressAsText: () => Buffer.from('127.0.0.1'),
  };
  const headers: Record<string, string> = { ...r.headers, 'content-length': String(r.body.length) };
  const req = {
    getCaseSensitiveMethod: () => r.method,
    getMethod: () => r.method.toLowerCase(),
    getUrl: () => r.path,
    getQuery: () => r.query,
    getHeader: (k: string | Uint8Array) => headers[Buffer.from(k).toString()] ?? '',
    forEach: () => undefined,
  };
  return { res: res as unknown as HttpResponse, req: req as unknown as HttpRequest };
}

/** One POST of `body` to `path`; `answered` gets the status line when the handler ends the reply. */
export function fakePost(
  path: string,
  body: Buffer,
  userAgent: string,
  answered: (status: string) => void,
): { res: HttpResponse; req: HttpRequest } {
  return fakeRequest(
    { method: 'POST', path, headers: { 'content-type': 'application/json', 'user-agent': userAgent }, body },
    answered,
  );
}

/**
 * Runs `total` creates (`post(name, answered)` builds each, named `<tag>-<n>`), `concurrency` in
 * flight; resolves when all are answered, each with a 201.
 */
export function drivePosts(
  plain: (res: HttpResponse, req: HttpRequest) => void,
  post: (name: string, answered: (status: string) => void) => { res: HttpResponse; req: HttpRequest },
  tag: string,
  total: number,
  concurrency: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sent = 0;
    let done = 0;
    const next = (): void => {
      const { res, req } = post(`${tag}-${sent++}`, (status) => {
        if (!status.startsWith('201')) return reject(new Error(`create answered ${status}`));
        if (++done === total) resolve();
        else if (sent < total) next();
      });
      plain(res, req);
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}
