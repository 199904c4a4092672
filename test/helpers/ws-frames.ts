/**
 * Minimal RFC 6455 framing over an upgraded socket, for the fake node agent (server side:
 * unmasked frames out, masked frames in) and for test clients (mask = true). Binary messages
 * only; ping is answered, close is echoed.
 */
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';

export class WsConn {
  onMessage: (m: Buffer) => void = () => {};
  onClose: () => void = () => {};
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private closed = false;

  constructor(
    readonly sock: Duplex,
    head: Buffer = Buffer.alloc(0),
    private readonly mask = false,
  ) {
    sock.on('data', (c: Buffer) => this.feed(c));
    sock.on('close', () => this.end());
    sock.on('error', () => this.end());
    if (head.length) queueMicrotask(() => this.feed(head));
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  /** sends one binary message; false when the socket is full (wait for 'drain') */
  send(payload: Buffer, opcode = 2): boolean {
    if (this.closed || this.sock.destroyed) return false;
    const n = payload.length;
    const len =
      n < 126
        ? Buffer.from([n | (this.mask ? 0x80 : 0)])
        : n < 65536
          ? Buffer.from([126 | (this.mask ? 0x80 : 0), n >> 8, n & 255])
          : Buffer.concat([Buffer.from([127 | (this.mask ? 0x80 : 0), 0, 0, 0, 0]), uint32(n)]);
    if (!this.mask) return this.sock.write(Buffer.concat([Buffer.from([0x80 | opcode]), len, payload]));
    const key = randomBytes(4);
    const masked = Buffer.from(payload);
    for (let i = 0; i < n; i++) masked[i]! ^= key[i & 3]!;
    return this.sock.write(Buffer.concat([Buffer.from([0x80 | opcode]), len, key, masked]));
  }

  close(): void {
    if (this.closed) return;
    this.send(Buffer.from([0x03, 0xe8]), 8);
    this.sock.end();
    this.end();
  }

  private feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.buf.length < 2) return;
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
        len = this.buf.readUInt32BE(6);
        off = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const total = off + (masked ? 4 : 0) + len;
      if (this.buf.length < total) return;
      let payload: Buffer = Buffer.from(this.buf.subarray(off + (masked ? 4 : 0), total));
      if (masked) {
        const key = this.buf.subarray(off, off + 4);
        for (let i = 0; i < payload.length; i++) payload[i]! ^= key[i & 3]!;
      }
      this.buf = this.buf.subarray(total);
      const opcode = b0 & 15;
      if (opcode === 8) {
        this.close();
        return;
      }
      if (opcode === 9) {
        this.send(payload, 10);
        continue;
      }
      if (opcode === 10) continue;
      this.fragments.push(payload);
      if ((b0 & 0x80) === 0) continue;
      payload = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments);
      this.fragments = [];
      this.onMessage(payload);
    }
  }
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
