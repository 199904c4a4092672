/**
 * A streaming watch client for tests: parses the newline-delimited JSON events as they
 * arrive, and waits for observable conditions (events, end of stream) with bounded timeouts.
 */
import http from 'node:http';
import { EventEmitter } from 'node:events';
import { request } from './server.js';

export interface WatchEvent {
  type: string;
  object: any;
}

export interface WatchClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: WatchEvent[];
  /** the whole body when the response is not a 200 stream */
  body: any;
  /** the server ended the stream with the terminating chunk */
  ended: boolean;
  /** the connection closed without a complete response */
  broken: boolean;
  /** resolves once pred(events) holds; rejects after timeoutMs */
  waitFor(pred: (evs: WatchEvent[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  waitEvents(n: number, timeoutMs?: number): Promise<WatchEvent[]>;
  waitClosed(timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens a watch; resolves when the response headers arrive (rejects after headerTimeoutMs). */
export function openWatch(base: string, path: string, headerTimeoutMs = 5000): Promise<WatchClient> {
  const url = new URL(base + path);
  return new Promise((resolve, reject) => {
    const em = new EventEmitter();
    em.setMaxListeners(100);
    const c: WatchClient = {
      status: 0,
      headers: {},
      events: [],
      body: undefined,
      ended: false,
      broken: false,
      waitFor: (pred, what, timeoutMs = 10_000) =>
        waitOn(
          em,
          () => pred(c.events),
          () => closed,
          what,
          timeoutMs,
          c,
        ),
      async waitEvents(n, timeoutMs) {
        await c.waitFor((evs) => evs.length >= n, `${n} events`, timeoutMs);
        return c.events;
      },
      waitClosed: (timeoutMs = 10_000) =>
        waitOn(
          em,
          () => closed,
          () => false,
          'stream end',
          timeoutMs,
          c,
        ),
      close: () => req.destroy(),
    };
    let closed = false;
    const done = () => {
      closed = true;
      em.emit('change');
    };
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no response headers for ${path} within ${headerTimeoutMs} ms`));
    }, headerTimeoutMs);
    const req = http.get(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, agent: false },
      (res) => {
        clearTimeout(timer);
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          if (c.status !== 200) return;
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim()) c.events.push(JSON.parse(line));
          }
          em.emit('change');
        });
        res.on('end', () => {
          c.ended = true;
          if (c.status !== 200) c.body = buf ? JSON.parse(buf) : undefined;
          done();
        });
        res.on('aborted', () => {
          c.broken = true;
          done();
        });
        res.on('error', () => {
          c.broken = true;
          done();
        });
        res.on('close', done);
        resolve(c);
      },
    );
    req.on('error', (e) => {
      clearTimeout(timer);
      c.broken = true;
      done();
      if (!c.status) reject(e);
    });
  });
}

function waitOn(
  em: EventEmitter,
  ok: () => boolean,
  failed: () => boolean,
  what: string,
  timeoutMs: number,
  c: WatchClient,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (ok()) {
        finish();
        resolve();
      } else if (failed()) {
        finish();
        reject(new Error(`stream closed before ${what}; got ${summary(c)}`));
      }
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out waiting for ${what}; got ${summary(c)}`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      em.off('change', check);
    };
    em.on('change', check);
    check();
  });
}

function summary(c: WatchClient): string {
  const evs = c.events.map(
    (e) => `${e.type}:${e.object?.metadata?.name ?? ''}@${e.object?.metadata?.resourceVersion ?? ''}`,
  );
  return `status ${c.status}, ${evs.length} events [${evs.slice(-10).join(' ')}]`;
}

/** Polls an async condition (server state) until it holds; bounded. */
export async function until<T>(
  probe: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs tasks with at most `limit` in flight. */
export async function pool<T>(items: T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** ADDED/MODIFIED/DELETED events as "TYPE name" strings. */
export function names(evs: WatchEvent[]): string[] {
  return evs.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}`);
}

/** Small typed wrappers over the REST calls the watch tests make. */
export function api(base: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await request(base, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
  return {
    call,
    /**
     * Creates a namespace and waits for the writes it triggers (the `default` ServiceAccount and,
     * where the cluster publishes one, the root CA ConfigMap), so the caller's next write is the
     * next resourceVersion.
     */
    namespace: async (name: string) => {
      const ns = await call('POST', '/api/v1/namespaces', { metadata: { name } });
      const present = async (path: string) => (await request(base, 'GET', path)).status === 200;
      const ca = ((await call('GET', cms('default'))).items as any[])
        .map((o) => o.metadata.name as string)
        .find((n) => n.endsWith('root-ca.crt'));
      await until(
        async () =>
          (await present(`/api/v1/namespaces/${name}/serviceaccounts/default`)) &&
          (!ca || (await present(`${cms(name)}/${ca}`))),
        `the writes namespace ${name} triggers`,
      );
      return ns;
    },
    create: (
      ns: string,
      name: string,
      labels: Record<string, string> = {},
      data: Record<string, string> = { k: 'v' },
    ) => call('POST', cms(ns), { metadata: { name, labels }, data }),
    /** read-modify-write of a ConfigMap: sets data and (optionally) labels */
    update: async (ns: string, name: string, data: Record<string, string>, labels?: Record<string, string>) => {
      const cur = await call('GET', `${cms(ns)}/${name}`);
      return call('PUT', `${cms(ns)}/${name}`, {
        ...cur,
        data,
        metadata: { ...cur.metadata, ...(labels ? { labels } : {}) },
      });
    },
    remove: (ns: string, name: string) => call('DELETE', `${cms(ns)}/${name}`),
    list: (ns: string, query = '') => call('GET', `${cms(ns)}${query ? '?' + query : ''}`),
    /** the server's current resourceVersion, read through a list */
    rv: async () =>
      (await call('GET', '/api/v1/namespaces/default/configmaps?limit=1')).metadata.resourceVersion as string,
  };
}
