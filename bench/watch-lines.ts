/**
 * The watch clients' reading of one stream (bench/watch-clients.ts): counts the event lines (a
 * newline right after `}`; chunk framing lines end in `\r\n`) in the bytes of each read and
 * hands each one's `bench-ts` annotation (microseconds of the system monotonic clock) to `seen`.
 *
 * Only the line the bytes carried over from the last read began is joined with them (a copy of
 * a few bytes): the server's JSON streams end every flush with a one-byte filler chunk after
 * the last newline (src/http/watch-stream.ts), so nearly every read of them starts with a carry,
 * and joining it with the whole read copied every byte the clients received once more, a cost
 * the ceiling's streams (which end on a newline) never paid.
 */
const MARKER = Buffer.from('"bench-ts":"');
const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;
/** a tail at most this long is copied, so it does not keep the whole read buffer alive */
const COPY_TAIL = 256;

/** An event line read at `now`, with its timestamp (0 when it carries none). */
export type Seen = (benchTsUs: number, now: number) => void;

export class LineCounter {
  private carry: Buffer | undefined;

  constructor(private readonly seen: Seen) {}

  /** Reads one chunk of the stream, received at `now`; returns the event lines it completed. */
  consume(chunk: Buffer, now: number): number {
    const first = chunk.indexOf(NEWLINE);
    if (first < 0) {
      this.carry = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
      return 0;
    }
    let n = 0;
    let from = 0;
    if (this.carry) {
      const line = Buffer.concat([this.carry, chunk.subarray(0, first + 1)]);
      n += this.scan(line, 0, line.length - 1, now);
      from = first + 1;
    }
    const last = chunk.lastIndexOf(NEWLINE);
    if (last >= from) n += this.scan(chunk, from, last, now);
    const rest = chunk.length - last - 1;
    this.carry =
      rest === 0 ? undefined : rest <= COPY_TAIL ? Buffer.from(chunk.subarray(last + 1)) : chunk.subarray(last + 1);
    return n;
  }

  /** Counts the event lines of buf whose newline lies in [pos, end], reporting each one's timestamp. */
  private scan(buf: Buffer, pos: number, end: number, now: number): number {
    let n = 0;
    while (pos <= end) {
      const nl = buf.indexOf(NEWLINE, pos);
      if (nl < 0 || nl > end) break;
      if (nl > 0 && buf[nl - 1] === CLOSE_BRACE) {
        n++;
        this.seen(timestamp(buf, pos, nl), now);
      }
      pos = nl + 1;
    }
    return n;
  }
}

/** The `bench-ts` value of the line buf[pos, nl), 0 when it has none. */
function timestamp(buf: Buffer, pos: number, nl: number): number {
  const m = buf.indexOf(MARKER, pos);
  if (m < 0 || m >= nl) return 0;
  let ts = 0;
  for (let i = m + MARKER.length; i < nl; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) break;
    ts = ts * 10 + (c - 0x30);
  }
  return ts;
}
