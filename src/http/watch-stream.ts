/**
 * The response side of one watch: a uWS chunked stream of events with backpressure, the
 * initial events in slices, queued events coalesced, and its deadline (src/handlers/watch.ts
 * opens it; the hub writes to it).
 */
import type { Encoding } from '../actors/protocol.js';
import { statusLine, type Exchange } from './exchange.js';
import { watchDeadlines, type Expiring } from './deadlines.js';
import type { WatchSink } from './watch-hub.js';
import { chunkLength, isBinaryStream, joinChunks, watchContentType, type Chunk } from '../codec/watch-encoding.js';

/**
 * Bytes of a large first chunk (the initial events) handed to uWS at a time: uWS copies what
 * the socket does not take at once, so a client that stops reading costs about this much
 * beyond the shared payload, not a copy of the whole initial state.
 */
export const WATCH_SLICE_BYTES = 16 * 1024;

/** The whitespace chunk that ends every flush of a JSON watch (see WatchStream). */
const FILLER = Buffer.from(' ');

/**
 * Chunks at least this long may not fit uWS's 16 KB cork buffer: uWS then sends the corked
 * bytes and the chunk at once and leaves the socket uncorked, so each of the filler's four
 * framing pieces would be a send (and a TCP segment) of its own. The filler after such a chunk
 * gets a cork of its own: one send (3 per flush instead of 6, measured with strace).
 */
const RECORK_BYTES = 8 * 1024;

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
  /** the chunk write() hands to its cork (a bound callback: no closure per write) */
  private next: Chunk = '';
  private nextOk = true;
  private readonly corkedWrite = (): void => {
    if (this.headPending) this.writeHead();
    this.nextOk = this.flushOut(this.next);
  };
  private fillerOk = true;
  private readonly writeFiller = (): void => {
    this.fillerOk = this.x.res.write(FILLER);
  };

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
    this.next = chunk;
    this.x.res.cork(this.corkedWrite);
    this.next = '';
    this.buffered = this.nextOk ? 0 : chunkLength(chunk);
    return this.buffered;
  }

  /** Writes chunk (inside a cork), then for JSON the filler that completes it on the wire. */
  private flushOut(chunk: Chunk): boolean {
    const res = this.x.res;
    const n = chunkLength(chunk);
    const ok = n === 0 || res.write(chunk);
    if (this.binary) return ok;
    if (n < RECORK_BYTES) return res.write(FILLER) && ok;
    // still corked (the chunk fitted) this only writes; else it corks the filler's pieces into one send
    res.cork(this.writeFiller);
    return this.fillerOk && ok;
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
