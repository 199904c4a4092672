/**
 * LIST of a whole collection in pages (issue 12: lists of 100,000+ objects keep resident memory
 * bounded). The first page is asked for with a page limit; when it holds the whole list, the
 * answer is one body as before. Otherwise the response streams: the list head, each page's items
 * as the actor encoded them (consistent at the first page's resourceVersion through continue
 * tokens), then the tail, with backpressure: the next page is asked for only once the socket
 * has taken the last one. With gzip the pieces go through one gzip stream whose compression
 * runs on libuv's thread pool, not on the front thread's event loop. Protobuf lists stream the
 * same way: the first page opens the envelope sized for every item (src/registry/list-page.ts).
 */
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type { OpInput } from '../actors/pool.js';
import type { PageMeta, Result } from '../actors/protocol.js';
import { statusLine } from '../http/exchange.js';
import { errors } from '../api/status.js';
import { protobufListClose } from '../codec/codec.js';
import { returnBody } from '../actors/pack.js';
import type { Request, Services } from '../http/context.js';
import { reply } from '../http/reply.js';

/** objects per page: pages stay a few MB for typical objects */
export const STREAM_PAGE = 1000;

export type ListOp = Extract<OpInput, { op: 'list' }>;
type Page = Extract<Result, { code: number }> & { page: PageMeta };

/**
 * Plain JSON and Protobuf LISTs of a whole collection at the newest version stream; chunked,
 * Table, YAML, CBOR and resourceVersion-pinned ones (served by their semantics table) do not.
 */
export function streamable(r: Request): boolean {
  const { enc, query } = r;
  return (
    (enc.format === 'json' || enc.format === 'protobuf') &&
    !enc.pretty &&
    !enc.view &&
    !r.info.subresource &&
    !query.get('limit') &&
    !query.get('continue') &&
    !query.has('resourceVersion') &&
    !query.has('resourceVersionMatch')
  );
}

/** The first page's operation. */
export function firstPage(op: ListOp): ListOp {
  return { ...op, opts: { ...op.opts, limit: STREAM_PAGE }, page: true };
}

/** Answers with the first page's reply: the whole list when it fitted, else the stream of pages. */
export async function streamList(r: Request, s: Services, op: ListOp, first: Result): Promise<void> {
  // the whole list fitted in one page: an ordinary reply (compressed by the actor when large)
  if (!('code' in first) || !first.page) return reply(r, first);
  if (r.enc.format === 'protobuf') {
    // the first page opens the envelope (sized for every item), pages are bare `items` fields
    return stream(r, s, op, first as Page, {
      head: '',
      sep: undefined,
      tail: protobufListClose,
      size: first.page.size,
    });
  }
  const head = `{"kind":"${r.def.listKind}","apiVersion":"${r.def.group ? `${r.def.group}/${r.def.version}` : r.def.version}","metadata":{"resourceVersion":"${first.page.resourceVersion}"},"items":[`;
  await stream(r, s, op, first as Page, { head, sep: ',', tail: ']}\n' });
}

/** What the front writes around the pages' bytes; size: the whole body's length when known (checked at the end). */
interface Framing {
  head: string;
  sep: string | undefined;
  tail: string | Readonly<Uint8Array>;
  size?: number;
}

/**
 * The response side of a streamed list: the status line and headers, the bytes (through one gzip
 * stream when asked for), the count of bytes sent, and the socket's backpressure.
 */
class StreamOut {
  private readonly gz;
  private drained: (() => void) | undefined;
  private ok = true;
  /** bytes of the body before compression */
  sent = 0;

  constructor(
    private readonly x: Request['x'],
    gzip: boolean,
    contentType: string,
  ) {
    this.gz = gzip ? createGzip({ level: 1 }) : undefined;
    const gz = this.gz;
    gz?.on('data', (c: Buffer) => this.write(c));
    x.res.onWritable(() => {
      this.ok = true;
      this.drained?.();
      return true;
    });
    const prevAbort = x.onAbort;
    x.onAbort = () => {
      prevAbort?.();
      gz?.destroy();
      this.drained?.();
    };
    x.res.cork(() => {
      x.res.writeStatus(statusLine(200)).writeHeader('Content-Type', contentType);
      if (gz) x.res.writeHeader('Content-Encoding', 'gzip').writeHeader('Vary', 'Accept-Encoding');
      for (const [k, v] of x.headers) x.res.writeHeader(k, v);
    });
  }

  /** whether a page's buffer is free once written: uWS copied (or sent) it, nothing else holds it */
  get copies(): boolean {
    return !this.gz;
  }

  private write(chunk: string | Uint8Array): void {
    const { x } = this;
    if (!x.aborted)
      x.res.cork(() => {
        this.ok = x.res.write(chunk);
      });
  }

  /** Writes bytes as they are (pages go out as the actor's bytes: no string round trip). */
  async out(t: string | Uint8Array): Promise<void> {
    this.sent += typeof t === 'string' ? Buffer.byteLength(t) : t.byteLength;
    if (!this.gz) return this.write(t);
    if (!this.gz.write(t)) await once(this.gz, 'drain');
  }

  /** Resolves once the socket took what was written (at once when it did, or the client left). */
  async writable(): Promise<void> {
    if (!this.ok && !this.x.aborted)
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
    this.ok = true;
    this.drained = undefined;
  }

  /** Writes the tail and ends the response. */
  async end(tail: string | Readonly<Uint8Array>): Promise<void> {
    const { x, gz } = this;
    if (gz) {
      const ended = once(gz, 'end');
      gz.end(tail);
      await ended;
    } else this.write(tail as string | Uint8Array);
    if (!x.aborted) x.res.cork(() => x.res.end());
  }
}

async function stream(r: Request, s: Services, op: ListOp, first: Page, frame: Framing): Promise<void> {
  const { x } = r;
  if (x.aborted || x.done) return;
  x.done = true;
  const o = new StreamOut(x, r.enc.gzip === true, first.contentType);
  if (frame.head) await o.out(frame.head);
  // a page written without gzip is copied by uWS (or sent): its buffer goes back for reuse
  const done = (page: Result) => {
    if (o.copies && !x.audit) returnBody(page);
  };
  if (first.body.length) await o.out(first.body);
  done(first);
  let items = first.page.items;
  const fetch = nextPages(s, op);
  try {
    // one page ahead: once the socket took what was written, the actor selects and joins the
    // page after the next one while the next one is written
    let cont = first.page.continue;
    let pending: Promise<Result> | undefined;
    while (cont) {
      await o.writable();
      if (x.aborted) return;
      const next = await (pending ?? fetch(cont)!);
      if (x.aborted) return;
      if (!('code' in next) || !next.page)
        throw errors.internal(('error' in next ? next.error.message : undefined) ?? 'list page failed');
      cont = next.page.continue;
      pending = fetch(cont);
      if (next.page.items > 0) {
        if (items > 0 && frame.sep) await o.out(frame.sep);
        await o.out(next.body);
      }
      done(next);
      items += next.page.items;
    }
    const sent = o.sent + frame.tail.length;
    // a Protobuf envelope announced its length: a body of another length would be misread
    if (frame.size !== undefined && sent !== frame.size)
      throw errors.internal(`streamed list of ${sent} bytes, ${frame.size} announced`);
    await o.end(frame.tail);
  } catch {
    // the status line is gone: an incomplete body is the only signal left (as upstream)
    if (!x.aborted) x.res.close();
  } finally {
    x.release?.();
  }
}

/** Asks the actor for the page a continue token names (none after the last page). */
function nextPages(s: Services, op: ListOp): (cont: string | undefined) => Promise<Result> | undefined {
  const { labelSelector, fieldSelector } = op.opts;
  return (cont) => {
    if (!cont) return undefined;
    const p = s.pool.submit({
      ...op,
      opts: { labelSelector, fieldSelector, limit: STREAM_PAGE, continue: cont },
      page: true,
    });
    p.catch(() => undefined); // awaited by the stream unless the client left first
    return p;
  };
}
