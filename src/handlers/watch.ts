/**
 * Watch streams: the owning actor answers with the initial events and the version live
 * events continue from; the front thread then streams hub deliveries over chunked transfer
 * encoding, one JSON event per line, until timeoutSeconds, the jittered server timeout, the
 * client leaving, or the buffer limit.
 */
import { errors } from '../api/status.js';
import type { TypeRef, Encoding } from '../actors/protocol.js';
import { parseFieldSelector, parseLabelSelector } from '../api/selectors.js';
import { eventLine, type Matcher } from '../api/watch-filter.js';
import { sendStatus, statusLine } from '../server/http.js';
import { isTruthy } from '../server/negotiation.js';
import { bookmarkLine, type Watcher } from '../server/watch-hub.js';
import type { Request, Services } from './context.js';
import { listOptions } from './resource.js';

export const INITIAL_EVENTS_END = 'plat.io/initial-events-end';

export function serveWatch(r: Request, s: Services, base: { type: TypeRef; enc: Encoding }): void {
  const q = r.query;
  const opts = { ...listOptions(q), allowWatchBookmarks: isTruthy(q.get('allowWatchBookmarks')), sendInitialEvents: q.has('sendInitialEvents') ? isTruthy(q.get('sendInitialEvents')) : undefined };
  if (r.info.name) {
    // legacy GET .../<name>?watch=1 watches one object
    const f = opts.fieldSelector ? `${opts.fieldSelector},metadata.name=${r.info.name}` : `metadata.name=${r.info.name}`;
    opts.fieldSelector = f;
  }
  const timeoutSec = timeoutSeconds(q, s.options.minRequestTimeoutSec);
  s.pool.submit({ ...base, op: 'watch', namespace: r.info.namespace, opts }).then((res) => {
    if ('error' in res) {
      if (res.error.code === 410) return startStream(r, [eventLine('ERROR', JSON.stringify(res.error))], 0, true);
      return sendStatus(r.x, res.error);
    }
    if (!('watch' in res)) return sendStatus(r.x, errors.internal('watch start failed').status);
    const w = res.watch;
    const lines = [...w.initial];
    if (w.initialEventsEndRV !== undefined) lines.push(bookmarkLine(w.kind, w.apiVersion, w.initialEventsEndRV, { [INITIAL_EVENTS_END]: 'true' }));
    const watcher = startStream(r, lines, timeoutSec, false);
    if (!watcher) return;
    const m = matcherFor(opts.labelSelector, opts.fieldSelector);
    const live: Watcher = {
      typeKey: w.typeKey, namespace: r.info.namespace, matcher: m, fromRV: w.fromRV, sink: watcher,
      bookmarks: opts.allowWatchBookmarks, kind: w.kind, apiVersion: w.apiVersion, closed: false,
    };
    watcher.onClose = () => s.hub.remove(live);
    s.hub.add(live);
  });
}

function matcherFor(label: string | undefined, field: string | undefined): Matcher | undefined {
  const l = parseLabelSelector(label ?? '');
  const f = parseFieldSelector(field ?? '');
  if (l.empty && f.empty) return undefined;
  return (labels, fields) => (l.empty || l.matches(labels)) && (f.empty || f.matches(fields));
}

/** timeoutSeconds, else the server's minimum request timeout with up to 100% jitter. */
function timeoutSeconds(q: URLSearchParams, min: number): number {
  const t = q.get('timeoutSeconds');
  if (t !== null && /^[0-9]+$/.test(t) && t !== '0') return Number(t);
  return min * (1 + Math.random());
}

interface Stream { write(chunk: string): number; close(): void; onClose?: () => void }

function startStream(r: Request, first: string[], timeoutSec: number, endNow: boolean): Stream | undefined {
  const { x } = r;
  if (x.aborted || x.done) return undefined;
  let buffered = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const stream: Stream = {
    write(chunk) {
      if (closed) return 0;
      x.res.cork(() => {
        // uWS buffers what the socket does not take; count it until the socket drains.
        if (!x.res.write(chunk)) buffered += chunk.length;
        else buffered = 0;
      });
      return buffered;
    },
    close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      if (!x.aborted) x.res.cork(() => x.res.end());
      x.done = true;
      stream.onClose?.();
    },
  };
  x.res.cork(() => {
    x.res.writeStatus(statusLine(200)).writeHeader('Content-Type', 'application/json');
    for (const [k, v] of x.headers) x.res.writeHeader(k, v);
    const head = first.join('');
    if (head) x.res.write(head);
  });
  x.res.onWritable(() => { buffered = 0; return true; });
  x.onAbort = () => { closed = true; if (timer) clearTimeout(timer); stream.onClose?.(); };
  if (endNow) { stream.close(); return undefined; }
  if (timeoutSec > 0) timer = setTimeout(() => stream.close(), timeoutSec * 1000);
  return stream;
}
