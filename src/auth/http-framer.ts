/**
 * A streaming HTTP/1.1 request framer for the TLS front: it finds each request head in the
 * client's byte stream, rewrites it (drops client copies of the internal identity header and
 * inserts the connection's own), and passes bodies through untouched, following
 * Content-Length, chunked transfer coding and upgrades, so keep-alive and pipelining work.
 */

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

export const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 4096;

type State =
  | { s: 'head' }
  | { s: 'fixed'; left: number }
  | { s: 'chunk-size' }
  | { s: 'chunk-data'; left: number }
  | { s: 'trailer' }
  | { s: 'tunnel' };

export interface FramerSink {
  /** writes bytes towards the server */
  write(b: Buffer): void;
  /** the stream is not HTTP we can frame: answer with this status and close */
  fail(code: 400 | 431, message: string): void;
  /**
   * an upgrade request's (rewritten) head; when present it replaces write for that head, and
   * every later byte of the connection still goes to write (the tunnel)
   */
  upgrade?(head: Buffer): void;
  /** besides upgrades, requests (by request line) whose connection upgrade takes over too */
  takesOver?(requestLine: string): boolean;
}

export class RequestFramer {
  private state: State = { s: 'head' };
  private pending: Buffer | undefined;
  private failed = false;

  /**
   * dropHeader: a lower-case header name prefix; client headers starting so are dropped (the
   * front's own). inject: complete header line(s) ending in CRLF, inserted after the request line ('' for none).
   */
  constructor(
    private readonly dropHeader: string,
    private readonly inject: string,
    private readonly sink: FramerSink,
  ) {}

  /** Whether part of a request head has arrived and its end has not. */
  headPending(): boolean {
    return this.state.s === 'head' && this.pending !== undefined && !this.failed;
  }

  push(chunk: Buffer): void {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    while (buf.length > 0 && !this.failed) {
      const st = this.state;
      switch (st.s) {
        case 'tunnel':
          this.sink.write(buf);
          return;
        case 'fixed':
        case 'chunk-data': {
          const n = Math.min(st.left, buf.length);
          this.sink.write(buf.subarray(0, n));
          st.left -= n;
          buf = buf.subarray(n);
          if (st.left === 0) this.state = st.s === 'fixed' ? { s: 'head' } : { s: 'chunk-size' };
          break;
        }
        case 'head': {
          const end = buf.indexOf(HEAD_END);
          if (end < 0) return this.keep(buf, MAX_HEAD_BYTES, 431, 'request header too large');
          this.head(buf.subarray(0, end + 4));
          buf = buf.subarray(end + 4);
          break;
        }
        case 'chunk-size':
        case 'trailer': {
          const end = buf.indexOf(CRLF);
          if (end < 0) return this.keep(buf, MAX_LINE_BYTES, 400, 'chunk line too long');
          const line = buf.subarray(0, end).toString('latin1');
          this.sink.write(buf.subarray(0, end + 2));
          buf = buf.subarray(end + 2);
          if (st.s === 'trailer') {
            if (line === '') this.state = { s: 'head' };
            break;
          }
          const size = /^[0-9a-fA-F]{1,8}(?:[ \t]*;.*)?$/.test(line) ? parseInt(line, 16) : NaN;
          if (Number.isNaN(size)) return this.fail(400, 'invalid chunk size');
          this.state = size === 0 ? { s: 'trailer' } : { s: 'chunk-data', left: size + 2 };
          break;
        }
      }
    }
  }

  private keep(buf: Buffer, limit: number, code: 400 | 431, message: string): void {
    if (buf.length > limit) return this.fail(code, message);
    // copy: the caller's chunk may be reused
    this.pending = Buffer.from(buf);
  }

  private fail(code: 400 | 431, message: string): void {
    this.failed = true;
    this.sink.fail(code, message);
  }

  /** Rewrites one request head and sets the body state from its framing headers. */
  private head(raw: Buffer): void {
    const lines = raw.toString('latin1').split('\r\n');
    let out = lines[0] + '\r\n' + this.inject;
    let length: number | undefined,
      chunked = false,
      upgrade = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '') continue;
      const colon = line.indexOf(':');
      const name = (colon < 0 ? line : line.slice(0, colon)).trim().toLowerCase();
      const value = colon < 0 ? '' : line.slice(colon + 1).trim();
      if (name.startsWith(this.dropHeader)) continue;
      if (name === 'content-length') {
        if (!/^[0-9]{1,15}$/.test(value) || (length !== undefined && length !== Number(value)))
          return this.fail(400, 'invalid Content-Length');
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        chunked = value
          .toLowerCase()
          .split(',')
          .map((s) => s.trim())
          .includes('chunked');
        if (!chunked) return this.fail(400, 'unsupported Transfer-Encoding');
      } else if (name === 'upgrade') upgrade = true;
      out += line + '\r\n';
    }
    if (chunked && length !== undefined) return this.fail(400, 'both Content-Length and Transfer-Encoding');
    const rewritten = Buffer.from(out + '\r\n', 'latin1');
    const takeOver = upgrade || this.sink.takesOver?.(lines[0]!) === true;
    if (takeOver && this.sink.upgrade) this.sink.upgrade(rewritten);
    else this.sink.write(rewritten);
    if (takeOver) this.state = { s: 'tunnel' };
    else if (chunked) this.state = { s: 'chunk-size' };
    else if (length) this.state = { s: 'fixed', left: length };
  }
}
