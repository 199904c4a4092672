/**
 * A strict HTTP/1.1 chunked-response reader over a raw socket (plain or TLS): it parses
 * `<hex>\r\n<data>\r\n` and releases a chunk's data only once its terminating CRLF is there,
 * as urllib3 (so the Python client) does. Used to check that watch events are complete on the
 * wire when their flush leaves.
 */
import assert from 'node:assert/strict';
import type { Duplex } from 'node:stream';

export class StrictChunkReader {
  head: string | undefined;
  /** the data of every complete chunk, in order */
  readonly chunks: string[] = [];
  ended = false;
  private buf = Buffer.alloc(0);

  /** Reads the response to one GET of path; `socket` is connecting (the request goes out on connect). */
  constructor(
    readonly socket: Duplex,
    path: string,
    connectEvent: 'connect' | 'secureConnect' = 'connect',
    headers = '',
  ) {
    socket.once(connectEvent, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`));
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
    });
    socket.on('error', () => undefined);
  }

  private parse(): void {
    if (this.head === undefined) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.head = this.buf.subarray(0, end).toString('latin1');
      this.buf = this.buf.subarray(end + 4);
    }
    for (;;) {
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) return;
      const sizeLine = this.buf.subarray(0, eol).toString('latin1');
      assert.ok(/^[0-9a-f]+$/i.test(sizeLine), `bad chunk size line ${JSON.stringify(sizeLine)}`);
      const size = parseInt(sizeLine, 16);
      // the data and its CRLF must both be there before the chunk counts as received
      if (this.buf.length < eol + 2 + size + 2) return;
      assert.equal(
        this.buf.subarray(eol + 2 + size, eol + 4 + size).toString('latin1'),
        '\r\n',
        'chunk data not followed by CRLF',
      );
      const data = this.buf.subarray(eol + 2, eol + 2 + size).toString('utf8');
      this.buf = this.buf.subarray(eol + 4 + size);
      if (size === 0) {
        this.ended = true;
        return;
      }
      this.chunks.push(data);
    }
  }

  /** the watch events received so far (complete chunks only) */
  events(): { type: string; object: { metadata: { name: string } } }[] {
    return this.chunks
      .join('')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  }
}
