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
import { sendStatus, statusLine, type Exchange } from '../http/exchange.js';
import { isTruthy } from '../http/negotiation.js';
import { watchDeadlines, type Expiring } from '../http/deadlines.js';
import { bookmarkEvent, errorEvent, type Watcher, type WatchSink } from '../http/watch-hub.js';
import { chunkLength, isBinaryStream, joinChunks, watchContentType, type Chunk } from '../codec/watch-encoding.js';
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
    return sendStatus(
      r.x,
      errors.badRequest(`unable to parse selector: ${(e as Error).message}`).status,
      r.enc.pretty,
      enc,
    );
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
    stream.write(
      bookmarkEvent(enc, w.kind, w.apiVersion, w.initialEventsEndRV, {
        [`${s.options.apiDomain}/initial-events-end`]: 'true',
      }),
    );
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

/**
 * Bytes of a large first chunk (the initial events) handed to uWS at a time: uWS copies what
 * the socket does not take at once, so a client that stops reading costs about this much
 * beyond the shared payload, not a copy of the whole initial state.
 */
export const WATCH_SLICE_BYTES = 16 * 1024;

/** The whitespace chunk that ends every flush of a JSON watch (see WatchStream). */
const FILLER = Buffer.from(' ');

/**
 * One watch response over uWS chunked encoding. uWS frames a chunk as `\r\n<hex>\r\n<data>`:
 * the CRLF that ends a chunk's data goes out only with the next chunk (or the end of the
 * response), and the header block too ends only with the first chunk. A client whose HTTP
 * library returns a chunk's data only after its terminator (urllib3, so the Python client)
 * would get each event when the next one is written. So every flush of a JSON stream ends
 * with a one-byte whitespace chunk (`FILLER`, ignored by every JSON stream decoder and line
 * splitter): the event chunks before it are complete on the wire when the flush leaves, and
 * only the filler waits for its terminator. The stream's headers go out at once with the
 * first flush (the initial events, or the filler alone). Binary framings (Protobuf, CBOR)
 * cannot take filler bytes; their readers (Go's) return chunk data before the terminator, and
 * with no initial events their headers go out with the first event (or the end of the stream).
 *
 * Initial events (often shared with other watchers) go out in slices as the socket takes
 * them; later events queue behind them, and the filler follows once the queue is drained (never
 * between slices, which may split an event). What a watcher holds of its own (uWS's backlog and
 * the queued events) is what write() reports, so the hub's --watch-buffer-bytes limit closes a
 * watcher that does not read during its initial events too.
 */
export class WatchStream implements WatchSink, Expiring {
  /** estimated bytes uWS holds for this client (written since the socket last kept up) */
  private buffered = 0;
  /** chunks waiting for the socket: the initial bytes first, then queued events */
  private pending: Chunk[] = [];
  /** bytes of pending[0] already written */
  private offset = 0;
  /** bytes of the queued events (all of pending but the initial bytes) */
  private queued = 0;
  private initial: Uint8Array | undefined;
  private release: (() => void) | undefined;
  private ended = false;
  private headPending = false;
  private readonly contentType: string;
  private readonly binary: boolean;
  onClose?: () => void;

  constructor(
    private readonly x: Exchange,
    enc: Encoding,
  ) {
    this.contentType = watchContentType(enc);
    this.binary = isBinaryStream(enc);
  }

  /**
   * Sends the headers and the first bytes; undefined when the client already left. `release`
   * is called once the first bytes are no longer needed (all written, or the stream ended).
   */
  open(first: Chunk, timeoutSec: number, release?: () => void): this | undefined {
    const { x } = this;
    if (x.aborted || x.done) return undefined;
    x.done = true;
    // a watch holds an in-flight slot only while it starts (upstream counts initialization)
    x.release?.();
    if (x.head) {
      // HEAD: the watch's headers, no stream (a chunked body would break the connection's framing)
      x.res.cork(() => {
        this.writeHead();
        x.res.endWithoutBody(0);
      });
      return undefined;
    }
    this.release = release;
    if (chunkLength(first) === 0 && this.binary) this.headPending = true;
    else if (typeof first !== 'string' && first.byteLength > WATCH_SLICE_BYTES) {
      x.res.cork(() => this.writeHead());
      this.initial = first;
      this.pending.push(first);
      this.pump();
    } else
      x.res.cork(() => {
        this.writeHead();
        this.flushOut(first);
      });
    if (!this.pending.length) this.done();
    // uWS stops draining its own backlog once onWritable is set; an empty cork drains it
    // (and clears the timeout a failed write armed), so a backlog never stalls a stream.
    x.res.onWritable(() => {
      x.res.cork(() => {});
      // the next write tells whether a backlog is left (a write into one reports it)
      if (!this.pending.length) this.buffered = 0;
      this.pump();
      return true;
    });
    x.onAbort = () => this.finish();
    x.observer?.streamOpened(x);
    x.audit?.started();
    if (timeoutSec > 0) watchDeadlines.add(this, performance.now() + timeoutSec * 1000);
    return this;
  }

  private writeHead(): void {
    const { res, headers } = this.x;
    this.headPending = false;
    res.writeStatus(statusLine(200)).writeHeader('Content-Type', this.contentType);
    for (const [k, v] of headers) res.writeHeader(k, v);
  }

  /**
   * Writes one chunk; returns the bytes this client holds unread (uWS backlog and queued events).
   * While uWS holds a backlog for the socket (the last write pushed back), events queue here
   * and go out together, one corked write, when the socket drains (onWritable): every write to
   * a backlogged socket would cost uWS a send attempt per piece of the chunk's framing.
   */
  write(chunk: Chunk): number {
    if (this.ended) return 0;
    if (this.pending.length || this.buffered > 0) {
      this.pending.push(chunk);
      this.queued += chunkLength(chunk);
      return this.buffered + this.queued;
    }
    let ok = true;
    this.x.res.cork(() => {
      if (this.headPending) this.writeHead();
      ok = this.flushOut(chunk);
    });
    this.buffered = ok ? 0 : chunkLength(chunk);
    return this.buffered;
  }

  /** Writes chunk (inside a cork), then for JSON the filler that completes it on the wire. */
  private flushOut(chunk: Chunk): boolean {
    const res = this.x.res;
    const ok = chunkLength(chunk) === 0 || res.write(chunk);
    return this.binary ? ok : res.write(FILLER) && ok;
  }

  /**
   * Writes what is pending until the socket pushes back: the initial bytes a slice at a time,
   * then every queued event in one write (with the filler after it).
   */
  private pump(): void {
    while (this.pending.length && !this.ended) {
      const head = this.pending[0]!;
      if (head !== this.initial) return this.writeQueued();
      const piece = head.subarray(this.offset, this.offset + WATCH_SLICE_BYTES);
      let ok = true;
      this.x.res.cork(() => {
        ok = this.x.res.write(piece);
      });
      this.offset += piece.byteLength;
      if (this.offset >= head.byteLength) {
        this.pending.shift();
        this.offset = 0;
        this.done();
        // the flush is complete: the filler puts its last chunk on the wire
        if (!this.pending.length && !this.binary)
          this.x.res.cork(() => {
            ok = this.x.res.write(FILLER) && ok;
          });
      }
      this.buffered = ok ? 0 : this.buffered + piece.byteLength;
      if (!ok) return;
    }
  }

  /** The queued events (no initial bytes left), joined into one corked write. */
  private writeQueued(): void {
    const out = joinChunks(this.pending);
    this.pending = [];
    this.queued = 0;
    let ok = true;
    this.x.res.cork(() => {
      if (this.headPending) this.writeHead();
      ok = this.flushOut(out);
    });
    this.buffered = ok ? 0 : this.buffered + chunkLength(out);
  }

  /** The initial bytes are written (or no longer wanted): let go of them. */
  private done(): void {
    this.initial = undefined;
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  /** The stream's timeout (timeoutSeconds or the server's): it ends cleanly. */
  expire(): void {
    this.close();
  }

  /** Ends the stream cleanly (terminating chunk) once what is pending is written. */
  close(): void {
    if (this.ended) return;
    // a stream closed during its initial events is cut off: nothing may follow a partial event
    const cut = this.initial !== undefined && this.pending.length > 0;
    // whole events queued behind a backlog go out before the end of the stream
    const queued = cut || !this.pending.length ? undefined : joinChunks(this.pending);
    this.finish();
    if (this.x.aborted) return;
    if (cut) return void this.x.res.close();
    this.x.res.cork(() => {
      if (this.headPending) this.writeHead();
      if (queued) this.x.res.write(queued);
      this.x.res.end();
    });
  }

  /** Drops the connection at once, freeing its backlog. */
  abort(): void {
    if (this.ended) return;
    this.finish();
    if (!this.x.aborted) this.x.res.close();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    this.queued = 0;
    this.done();
    watchDeadlines.remove(this);
    this.x.observer?.streamClosed(this.x);
    this.x.audit?.complete(200);
    this.onClose?.();
  }
}
