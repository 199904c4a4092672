/**
 * RFC 6455 framing for the TLS front's translators (src/auth/stream-translator.ts,
 * src/auth/portforward-tunnel.ts): the server's frames out (never masked), the client's frames
 * in (masked, possibly fragmented). Only what the Kubernetes streaming protocols use: binary
 * and text messages, ping (answered by the caller), pong (ignored) and close.
 */
import { Writable, type Duplex } from 'node:stream';

export const OP_BINARY = 2,
  OP_CLOSE = 8,
  OP_PING = 9,
  OP_PONG = 10;

/** The head of an unmasked server frame carrying `n` payload bytes. */
export function wsHeader(n: number, opcode = OP_BINARY): Buffer {
  if (n < 126) return Buffer.from([0x80 | opcode, n]);
  if (n < 65536) return Buffer.from([0x80 | opcode, 126, n >> 8, n & 255]);
  const h = Buffer.alloc(10);
  h[0] = 0x80 | opcode;
  h[1] = 127;
  h.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
  h.writeUInt32BE(n >>> 0, 6);
  return h;
}

/** A whole unmasked server frame (control frames and small messages). */
export function wsFrame(payload: Buffer, opcode = OP_BINARY): Buffer {
  return Buffer.concat([wsHeader(payload.length, opcode), payload]);
}

/** The close frame the front sends: 1000, normal closure. */
export const NORMAL_CLOSE = wsFrame(Buffer.from([0x03, 0xe8]), OP_CLOSE);

export interface WsHandlers {
  /** a complete data message (fragments joined), unmasked */
  message(payload: Buffer, opcode: number): void;
  /** the client's ping: the caller answers the pong */
  ping(payload: Buffer): void;
  /** the client's close frame; nothing after it is read */
  close(): void;
}

/** Reads a client's frames from its byte stream. */
export class WsReader {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentOpcode = 0;
  private closed = false;

  constructor(private readonly on: WsHandlers) {}

  feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (!this.closed && this.buf.length >= 2) {
      const b0 = this.buf[0]!,
        b1 = this.buf[1]!;
      let len = b1 & 127,
        off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = this.buf.readUInt32BE(2) * 2 ** 32 + this.buf.readUInt32BE(6);
        off = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const start = off + (masked ? 4 : 0);
      if (this.buf.length < start + len) return;
      // a copy: the caller keeps the payload while this buffer is reused for later frames
      const payload = Buffer.from(this.buf.subarray(start, start + len));
      if (masked) unmask(payload, this.buf.subarray(off, off + 4));
      this.buf = this.buf.subarray(start + len);
      this.frame(b0, payload);
    }
  }

  private frame(b0: number, payload: Buffer): void {
    const opcode = b0 & 0x0f;
    if (opcode === OP_CLOSE) {
      this.closed = true;
      this.on.close();
      return;
    }
    if (opcode === OP_PING) {
      this.on.ping(payload);
      return;
    }
    if (opcode === OP_PONG) return;
    if (opcode !== 0) this.fragmentOpcode = opcode;
    const fin = (b0 & 0x80) !== 0;
    if (fin && this.fragments.length === 0) {
      this.on.message(payload, this.fragmentOpcode);
      return;
    }
    this.fragments.push(payload);
    if (!fin) return;
    const whole = Buffer.concat(this.fragments);
    this.fragments = [];
    this.on.message(whole, this.fragmentOpcode);
  }
}

/** XORs the client's masking key over the payload in place (4 bytes at a time where aligned). */
function unmask(p: Buffer, key: Buffer): void {
  const n = p.length;
  const k = key.readUInt32LE(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) p.writeUInt32LE((p.readUInt32LE(i) ^ k) >>> 0, i);
  for (; i < n; i++) p[i]! ^= key[i & 3]!;
}

/**
 * The client side of a relay as a Writable: the client's bytes are fed to its frame reader
 * (whose handlers write to the agent), with the agent's back-pressure; ending or destroying
 * it ends or destroys the agent.
 */
export function frameSink(reader: WsReader, agent: Duplex): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      reader.feed(chunk);
      if (agent.writableNeedDrain) agent.once('drain', () => cb());
      else cb();
    },
    final(cb) {
      agent.end();
      cb();
    },
    destroy(_e, cb) {
      agent.destroy();
      cb(null);
    },
  });
}
