/**
 * A gRPC bidirectional stream straight on node:http2, for the follower's etcd watch: etcd sends
 * every event of this server's own commits back on it (one message per transaction, every
 * value included), and grpc-js's per-message path (its call layers, interceptors, filters and a
 * copy of each message) was about as much client CPU as the commit's Txn call itself
 * (bench/etcd.ts profiles). The stream has the surface of grpc-js's ClientDuplexStream that
 * etcd3's WatchManager uses, with the same events in the same order, so etcd3 still attaches,
 * resumes and backs off the watchers on top of it:
 *
 * - `write(request)`: etcd3's own encoder (create and cancel requests are rare);
 * - 'data' per decoded message;
 * - on a status other than OK (etcd's, a broken session or stream as UNAVAILABLE, or `cancel()`
 *   as CANCELLED): 'error' (shaped as grpc-js's, h2-unary.ts), then 'end'; on OK, 'end';
 * - `writable` stays true until the stream ends (grpc-js's too: etcd3 reports the member failed
 *   on the errors it sees while it is).
 *
 * Each stream has a session of its own (a watch stream lives as long as its connection), closed
 * when the stream ends.
 */
import { EventEmitter } from 'node:events';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import type { SecureContextOptions } from 'node:tls';
import {
  CANCELLED,
  connectMember,
  decodeMessage,
  grpcError,
  grpcFrame,
  grpcRequest,
  INTERNAL,
  UNAVAILABLE,
} from './h2-unary.js';

/** Splits a stream's data into gRPC messages (each one copied out of the chunks it spans). */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;

  /** the messages the data completes; throws on a compressed frame */
  push(data: Buffer): Buffer[] {
    this.chunks.push(data);
    this.size += data.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.size < 5) return out;
      const head = this.peek(5);
      if (head[0] !== 0) throw new Error('compressed gRPC message (no compression was offered)');
      const length = head.readUInt32BE(1);
      if (this.size < 5 + length) return out;
      out.push(this.take(5 + length).subarray(5));
    }
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!;
  }

  /** the first n bytes, copied, removed from the chunks */
  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = Buffer.from(all.subarray(0, n));
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.size -= n;
    return out;
  }
}

export class H2Duplex<Req, Res> extends EventEmitter {
  writable = true;
  private readonly session: ClientHttp2Session;
  private readonly stream: ClientHttp2Stream;
  private readonly frames = new FrameReader();
  private ended = false;

  /** host: `host:port`; tls present for an https member */
  constructor(
    host: string,
    tls: SecureContextOptions | undefined,
    path: string,
    headers: Record<string, string>,
    private readonly serialize: (req: Req) => Buffer,
    private readonly decode: (message: Buffer) => Res,
  ) {
    super();
    this.session = connectMember(host, tls);
    this.session.on('error', () => undefined); // the stream reports it
    this.stream = grpcRequest(this.session, path, headers);
    this.listen();
  }

  write(req: Req): boolean {
    if (this.ended) return false;
    return this.stream.write(grpcFrame(this.serialize(req)));
  }

  /** Ends the call as grpc-js's cancel() does: 'error' CANCELLED, then 'end'. */
  cancel(): void {
    if (this.ended) return;
    this.finish(grpcError(CANCELLED, 'Cancelled on client'));
    this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  private listen(): void {
    let status: http2.IncomingHttpHeaders | undefined;
    this.stream.on('response', (h) => {
      if (h['grpc-status'] !== undefined) status = h;
      else if (h[':status'] !== 200) this.finish(grpcError(UNAVAILABLE, `HTTP status ${String(h[':status'])}`));
    });
    this.stream.on('trailers', (h) => (status = h));
    this.stream.on('data', (data: Buffer) => {
      if (this.ended) return;
      try {
        for (const m of this.frames.push(data)) this.emit('data', this.decode(m));
      } catch (e) {
        this.finish(grpcError(INTERNAL, (e as Error).message));
        this.stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    this.stream.on('error', (e) => this.finish(grpcError(UNAVAILABLE, e.message)));
    this.stream.on('close', () => {
      const code = status ? Number(status['grpc-status']) : UNAVAILABLE;
      const message = status ? decodeMessage(status['grpc-message']) : 'stream closed without a status';
      this.finish(code === 0 ? undefined : grpcError(code, message));
      this.session.close();
    });
  }

  /**
   * The call's one end: its error if it failed, then 'end', after the current callback (as
   * grpc-js reports a status: etcd3 cancels the stream from its own error handler).
   */
  private finish(err: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    process.nextTick(() => {
      if (err) this.emit('error', err);
      this.writable = false;
      this.emit('end');
    });
  }
}
