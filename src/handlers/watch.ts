/**
 * Watch streams: the owning actor answers with the initial events and the version live
 * events continue from; the front thread then streams hub deliveries over chunked transfer
 * encoding, one JSON event per line, until timeoutSeconds, the jittered server timeout, the
 * client leaving, or the buffer limit.
 */
import { errors } from '../api/status.js';
import type { ListOptions, Result, TypeRef, Encoding, WatchFlags } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { parseLabelSelector } from '../api/selectors.js';
import { parseFieldSelector } from '../api/field-selectors.js';
import type { Matcher } from '../api/watch-filter.js';
import { sendStatus } from '../http/exchange.js';
import { isTruthy } from '../http/negotiation.js';
import { bookmarkEvent, errorEvent, type Watcher, type WatchSink } from '../http/watch-hub.js';
import { WatchStream } from '../http/watch-stream.js';
import type { Request, Services } from '../http/context.js';
import { listOptions } from '../http/request-ops.js';
import { typeKeyOf } from '../actors/routing.js';

/** how long a read of a resourceVersion the server has not reached waits before 504 */
export const TOO_LARGE_WAIT_MS = 3000;
const TOO_LARGE_POLL_MS = 20;

/**
 * wrap: a sink between the hub and the client's stream (webhook conversion); the stream then
 * opens empty and the initial events go through the sink like every later delivery.
 */
export type WrapSink = (stream: WatchStream) => WatchSink;

export function serveWatch(r: Request, s: Services, base: { type: TypeRef; enc: Encoding }, wrap?: WrapSink): void {
  const q = r.query;
  const opts: ListOptions & WatchFlags = {
    ...listOptions(q),
    allowWatchBookmarks: isTruthy(q.get('allowWatchBookmarks')),
  };
  if (q.has('sendInitialEvents')) {
    if (s.options.featureGates.WatchList === false) {
      throw errors.badRequest(
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      );
    }
    opts.sendInitialEvents = isTruthy(q.get('sendInitialEvents'));
  }
  if (r.info.name) {
    // legacy GET .../<name>?watch=1 watches one object
    const byName = `metadata.name=${r.info.name}`;
    opts.fieldSelector = opts.fieldSelector ? `${opts.fieldSelector},${byName}` : byName;
  }
  const timeoutSec = timeoutSeconds(q, s.options.minRequestTimeoutSec);
  // initial events the hub holds for the type need not cross from the actor again
  const typeKey = typeKeyOf(base.type.group, base.type.resource);
  const held = s.hub.initial.pin(typeKey);
  const op: OpInput = {
    ...base,
    op: 'watch',
    namespace: r.info.namespace,
    opts,
    ...(held.keys.length ? { held: held.keys } : {}),
  };
  // the held payloads stay pinned until the reply has been shared (startStream)
  submitWaitingForRV(s, op)
    .then(
      (res) => {
        try {
          startStream(r, s, res, { enc: base.enc, opts, timeoutSec, typeKey, wrap });
        } finally {
          held.unpin();
        }
      },
      (e) => {
        held.unpin();
        throw e;
      },
    )
    .catch((e) => sendStatus(r.x, errors.internal(String((e as Error)?.message ?? e)).status, r.enc.pretty, base.enc));
}

/** The actor's answer to a watch op → the stream: initial events (shared), then live events from the hub. */
function startStream(
  r: Request,
  s: Services,
  res: Result,
  p: { enc: Encoding; opts: ListOptions & WatchFlags; timeoutSec: number; typeKey: string; wrap?: WrapSink },
): void {
  const { enc, opts, timeoutSec, typeKey, wrap } = p;
  if ('error' in res) {
    // upstream: a watch from a version no longer retained is a 200 stream with one ERROR event
    if (res.error.code === 410) return void new WatchStream(r.x, enc).open(errorEvent(enc, res.error), 0)?.close();
    return sendStatus(r.x, res.error, r.enc.pretty, enc);
  }
  if (!('watch' in res)) return sendStatus(r.x, errors.internal('watch start failed').status, r.enc.pretty, enc);
  const w = res.watch;
  let matcher: Matcher | undefined;
  try {
    matcher = matcherFor(opts.labelSelector, w.fieldSelector ?? opts.fieldSelector);
  } catch (e) {
    const st = errors.badRequest(`unable to parse selector: ${(e as Error).message}`).status;
    return sendStatus(r.x, st, r.enc.pretty, enc);
  }
  // one copy of the initial events for every watcher of the same state (src/http/initial-events.ts)
  const initial = s.hub.initial.share(typeKey, w.shareKey, w.initial);
  const opened = wrap
    ? new WatchStream(r.x, r.enc).open('', timeoutSec)
    : new WatchStream(r.x, enc).open(initial.bytes, timeoutSec, initial.release);
  if (!opened) return initial.release();
  const stream: WatchSink = wrap ? wrap(opened) : opened;
  if (wrap) {
    // the sink reads the bytes at once (it queues their text)
    stream.write(initial.bytes);
    initial.release();
  }
  if (w.initialEventsEndRV !== undefined) {
    const annotations = { [`${s.options.apiDomain}/initial-events-end`]: 'true' };
    stream.write(bookmarkEvent(enc, w.kind, w.apiVersion, w.initialEventsEndRV, annotations));
  }
  const live: Watcher = {
    typeKey: w.typeKey,
    namespace: r.info.namespace,
    matcher,
    fromRV: w.fromRV,
    startRV: w.fromRV,
    sink: stream,
    bookmarks: opts.allowWatchBookmarks === true,
    kind: w.kind,
    apiVersion: w.apiVersion,
    closed: false,
    enc,
    headersSent: initial.bytes.byteLength > 0,
  };
  opened.onClose = () => s.hub.remove(live);
  // registered in the same turn the actor's reply resolved: see WatchHub.add
  s.hub.add(live);
}

function isTooLarge(res: Result): boolean {
  return (
    'error' in res &&
    res.error.code === 504 &&
    (res.error.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge')
  );
}

/**
 * Submits a read; while the actor answers "Too large resource version", waits (re-checking the
 * server's newest version) up to TOO_LARGE_WAIT_MS and asks again, then returns the last
 * answer (504 with Retry-After). Serves watch; get and list can use it the same way.
 */
export async function submitWaitingForRV(
  s: Pick<Services, 'pool'>,
  op: OpInput,
  waitMs = TOO_LARGE_WAIT_MS,
): Promise<Result> {
  const deadline = Date.now() + waitMs;
  const rv = Number(
    ('opts' in op ? op.opts.resourceVersion : 'resourceVersion' in op ? op.resourceVersion : undefined) ?? 0,
  );
  for (;;) {
    const res = await s.pool.submit(op);
    if (!isTooLarge(res) || !(rv > 0) || Date.now() >= deadline) return res;
    while (s.pool.currentRV() < rv && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, TOO_LARGE_POLL_MS));
    }
  }
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
  if (t !== null && t !== '' && !/^-?[0-9]+$/.test(t))
    throw errors.badRequest(`invalid value for timeoutSeconds: "${t}"`);
  if (t !== null && Number(t) > 0) return Number(t);
  return min * (1 + Math.random());
}
