/**
 * The node agent's side of port forwarding (portforward.k8s.io over SPDY/3.1), enough for
 * kubectl v1.32: it reaches the agent as SPDY frames inside WebSocket binary messages
 * (`SPDY/3.1+portforward.k8s.io`). Each forwarded connection is two client streams, created
 * by client-go in this order: the error stream, then the data stream; the data stream's bytes
 * go to `target` (a loopback port standing in for the pod's) and back, FIN closing each way.
 * Header blocks are not decoded (SPDY compresses them against its dictionary); replies carry
 * an empty header block as stored deflate blocks of one zlib stream, which any reader accepts.
 */
import { connect, type Socket } from 'node:net';

const SYN_STREAM = 1,
  SYN_REPLY = 2,
  RST_STREAM = 3,
  PING = 6,
  GOAWAY = 7;
const FLAG_FIN = 1;

export class SpdyPortForward {
  private buf: Buffer = Buffer.alloc(0);
  private streams = 0;
  private replied = false;
  private readonly sockets = new Map<number, Socket>();
  /** error stream id of each data stream */
  private readonly errorOf = new Map<number, number>();
  private pendingError = 0;
  /** bytes carried towards the target and back (for the benchmark) */
  bytes = 0;

  /**
   * out: writes towards the client (false: its transport is full, then `drain` on transport
   * resumes the target); target: the loopback port standing in for the pod's
   */
  constructor(
    private readonly out: (b: Buffer) => boolean | void,
    private readonly target: number,
    private readonly transport?: NodeJS.EventEmitter,
  ) {}

  feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 8) {
      const len = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + len) return;
      const flags = this.buf[4]!;
      const payload = this.buf.subarray(8, 8 + len);
      if (this.buf[0]! & 0x80)
        this.control(this.buf.readUInt16BE(2), flags, Buffer.from(payload), this.buf.subarray(0, 8 + len));
      else this.data(this.buf.readUInt32BE(0) & 0x7fffffff, flags, Buffer.from(payload));
      this.buf = this.buf.subarray(8 + len);
    }
  }

  close(): void {
    for (const s of this.sockets.values()) s.destroy();
    this.sockets.clear();
  }

  private control(type: number, _flags: number, p: Buffer, whole: Buffer): void {
    if (type === PING) {
      this.out(Buffer.from(whole));
      return;
    }
    if (type === GOAWAY) return this.close();
    if (type === RST_STREAM) {
      const id = p.readUInt32BE(0) & 0x7fffffff;
      this.sockets.get(id)?.destroy();
      return;
    }
    if (type !== SYN_STREAM) return;
    const id = p.readUInt32BE(0) & 0x7fffffff;
    this.reply(id);
    if (this.streams++ % 2 === 0) {
      this.pendingError = id;
      return;
    }
    this.errorOf.set(id, this.pendingError);
    const sock = connect({ host: '127.0.0.1', port: this.target });
    this.sockets.set(id, sock);
    sock.on('data', (c: Buffer) => {
      this.bytes += c.length;
      if (this.frame(id, 0, c) === false && this.transport) {
        sock.pause();
        this.transport.once('drain', () => sock.resume());
      }
    });
    sock.on('end', () => this.finish(id));
    sock.on('error', () => this.finish(id));
  }

  private data(id: number, flags: number, p: Buffer): void {
    const sock = this.sockets.get(id);
    if (!sock) return;
    if (p.length) {
      this.bytes += p.length;
      sock.write(p);
    }
    if (flags & FLAG_FIN) sock.end();
  }

  private finish(id: number): void {
    if (!this.sockets.delete(id)) return;
    this.frame(id, FLAG_FIN, Buffer.alloc(0));
    const err = this.errorOf.get(id);
    if (err !== undefined) this.frame(err, FLAG_FIN, Buffer.alloc(0));
  }

  private frame(id: number, flags: number, data: Buffer): boolean | void {
    const h = Buffer.alloc(8);
    h.writeUInt32BE(id & 0x7fffffff, 0);
    h.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
    return this.out(Buffer.concat([h, data]));
  }

  /** SYN_REPLY with an empty header block (0 pairs) as a stored deflate block, then a sync flush. */
  private reply(id: number): void {
    const pairs = Buffer.alloc(4);
    const stored = Buffer.from([0x00, pairs.length, 0x00, ~pairs.length & 0xff, 0xff]);
    // the empty stored block is a sync flush: the reader hands the data over without reading past it
    const block = Buffer.concat([
      this.replied ? Buffer.alloc(0) : Buffer.from([0x78, 0x01]),
      stored,
      pairs,
      Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]),
    ]);
    this.replied = true;
    const body = Buffer.alloc(4);
    body.writeUInt32BE(id & 0x7fffffff, 0);
    const payload = Buffer.concat([body, block]);
    const h = Buffer.from([0x80, 0x03, 0x00, SYN_REPLY, 0, 0, 0, 0]);
    h.writeUInt32BE(payload.length, 4);
    this.out(Buffer.concat([h, payload]));
  }
}
