/**
 * How the TLS front moves a node agent's bytes to a client socket (a followed log, the
 * port-forward tunnel): the per-MiB cost of the front is what bounds those streams.
 *
 * `readable.pipe` pauses the source whenever a write returns false. A TLS socket's writable
 * high-water mark is 16 KiB and a write completes a turn later, so that is after every 16 KiB
 * record read from the agent: a pause and a resume (two epoll changes) per record, and one
 * SSL_write and one write(2) per record, each waking the client. Here the reads of one I/O turn
 * (up to 32 socket reads of 64 KiB) are written corked and released together once the turn
 * ends (setImmediate): one SSL_write and one writev for all of them. The source pauses only
 * when RELAY_WINDOW bytes wait in the client socket, and resumes on its 'drain'.
 */
import type { Duplex } from 'node:stream';

/** bytes that may wait in the client socket before the source is paused */
export const RELAY_WINDOW = 1024 * 1024;

/**
 * Writes every chunk `from` reads to `to` (after `header(chunk.length)` when given: one framed
 * message per read). The caller handles the end, errors and closes of both.
 */
export function relay(from: Duplex, to: Duplex, header?: (n: number) => Buffer): void {
  let corked = false;
  const release = () => {
    if (!corked) return;
    corked = false;
    to.uncork();
  };
  const resume = () => from.resume();
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed || to.writableEnded || chunk.length === 0) return;
    if (!corked) {
      corked = true;
      to.cork();
      setImmediate(release);
    }
    if (header) to.write(header(chunk.length));
    to.write(chunk);
    if (to.writableLength >= RELAY_WINDOW) {
      release();
      from.pause();
      to.once('drain', resume);
    }
  });
}
