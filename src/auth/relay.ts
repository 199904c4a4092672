/**
 * How the TLS front moves a node agent's bytes to a client socket (a followed log, the
 * port-forward tunnel): the per-MiB cost of the front is what bounds those streams.
 *
 * `readable.pipe` pauses the source whenever a write returns false. A TLS socket's writable
 * high-water mark is 16 KiB and a write completes a turn later, so that is after every 16 KiB
 * record read from the agent: a pause and a resume (two epoll changes) per record, and one
 * SSL_write and one write(2) per record, each waking the client. Here the reads of one I/O turn
 * (up to 32 socket reads of 64 KiB) are written corked and released together once the turn
 * ends (setImmediate) or RELAY_BATCH bytes are corked: one SSL_write and one writev per batch. The source pauses only
 * when RELAY_WINDOW bytes wait in the client socket, and resumes on its 'drain'.
 */
import type { Duplex } from 'node:stream';

/** bytes that may wait in the client socket before the source is paused */
export const RELAY_WINDOW = 1024 * 1024;
/** corked bytes written out without waiting for the turn's end (a long turn still feeds the client as it goes) */
export const RELAY_BATCH = 256 * 1024;

/**
 * Writes every chunk `from` reads to `to` (after `header(chunk.length)` when given: one framed
 * message per read). The caller handles the end, errors and closes of both.
 */
export function relay(from: Duplex, to: Duplex, header?: (n: number) => Buffer): void {
  let corked = false;
  let batched = 0;
  const release = () => {
    if (!corked) return;
    corked = false;
    batched = 0;
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
    batched += chunk.length;
    // the next reads of this turn start a new batch (the pending setImmediate release is harmless)
    if (batched >= RELAY_BATCH) release();
    if (to.writableLength >= RELAY_WINDOW) {
      release();
      from.pause();
      to.once('drain', resume);
    }
  });
}
