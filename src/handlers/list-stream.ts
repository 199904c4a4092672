/**
 * LIST of a whole collection in pages (issue 12: lists of 100,000+ objects keep resident memory
 * bounded). The first page is asked for with a page limit; when it holds the whole list, the
 * answer is one body as before. Otherwise the response streams: the list head, each page's items
 * as the actor encoded them (consistent at the first page's resourceVersion through continue
 * tokens), then the tail, with backpressure: the next page is asked for only once the socket
 * has taken the last one. With gzip the pieces go through one gzip stream whose compression
 * runs on libuv's thread pool, not on the front thread's event loop.
 */
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type { OpInput } from '../actors/pool.js';
import type { PageMeta, Result } from '../actors/protocol.js';
import { statusLine } from '../http/exchange.js';
import { errors } from '../api/status.js';
import type { Request, Services } from '../http/context.js';
import { reply } from '../http/reply.js';

/** objects per page: pages stay a few MB for typical objects */
export const STREAM_PAGE = 1000;

export type ListOp = Extract<OpInput, { op: 'list' }>;
type Page = Extract<Result, { code: number }> & { page: PageMeta };

/**
 * Plain JSON LISTs of a whole collection at the newest version stream; chunked, Table, YAML,
 * binary and resourceVersion-pinned ones (served by their semantics table) do not.
 */
export function streamable(r: Request): boolean {
  const { enc, query } = r;
  return enc.format === 'json' && !enc.pretty && !enc.view && !r.info.subresource &&
    !query.get('limit') && !query.get('continue') && !query.has('resourceVersion') && !query.has('resourceVersionMatch');
}

/** The first page's operation. */
export function firstPage(op: ListOp): ListOp {
  return { ...op, opts: { ...op.opts, limit: STREAM_PAGE }, page: true };
}

/** Answers with the first page's reply: the whole list when it fitted, else the stream of pages. */
export async function streamList(r: Request, s: Services, op: ListOp, first: Result): Promise<void> {
  // the whole list fitted in one page: an ordinary reply (compressed by the actor when large)
  if (!('code' in first) || !first.page) return reply(r, first);
  const head = `{"kind":"${r.def.listKind}","apiVersion":"${r.def.group ? `${r.def.group}/${r.def.version}` : r.def.version}","metadata":{"resourceVersion":"${first.page.resourceVersion}"},"items":[`;
  await stream(r, s, op, first as Page, head);
}

async function stream(r: Request, s: Services, op: ListOp, first: Page, head: string): Promise<void> {
  const { x } = r;
  if (x.aborted || x.done) return;
  x.done = true;
  const gz = r.enc.gzip ? createGzip({ level: 1 }) : undefined;
  let drained: (() => void) | undefined;
  let ok = true;
  const write = (chunk: string | Uint8Array) => {
    if (!x.aborted) x.res.cork(() => { ok = x.res.write(chunk); });
  };
  gz?.on('data', (c: Buffer) => write(c));
  // pages go out as the actor's bytes (no string round trip)
  const put = async (t: string | Uint8Array) => {
    if (!gz) return write(t);
    if (!gz.write(t)) await once(gz, 'drain');
  };
  x.res.onWritable(() => { ok = true; drained?.(); return true; });
  const prevAbort = x.onAbort;
  x.onAbort = () => { prevAbort?.(); gz?.destroy(); drained?.(); };
  x.res.cork(() => {
    x.res.writeStatus(statusLine(200)).writeHeader('Content-Type', 'application/json');
    if (gz) x.res.writeHeader('Content-Encoding', 'gzip').writeHeader('Vary', 'Accept-Encoding');
    for (const [k, v] of x.headers) x.res.writeHeader(k, v);
  });
  await put(head);
  if (first.body.length) await put(first.body);
  let items = first.page.items;
  let cont = first.page.continue;
  const { labelSelector, fieldSelector } = op.opts;
  try {
    while (cont) {
      if (!ok && !x.aborted) await new Promise<void>((resolve) => { drained = resolve; });
      ok = true;
      drained = undefined;
      if (x.aborted) return;
      const next = await s.pool.submit({ ...op, opts: { labelSelector, fieldSelector, limit: STREAM_PAGE, continue: cont }, page: true });
      if (x.aborted) return;
      if (!('code' in next) || !next.page) throw errors.internal(('error' in next ? next.error.message : undefined) ?? 'list page failed');
      if (next.page.items > 0) {
        if (items > 0) await put(',');
        await put(next.body);
      }
      items += next.page.items;
      cont = next.page.continue;
    }
    if (gz) {
      const ended = once(gz, 'end');
      gz.end(']}\n');
      await ended;
    } else write(']}\n');
    if (!x.aborted) x.res.cork(() => x.res.end());
  } catch {
    // the status line is gone: an incomplete body is the only signal left (as upstream)
    if (!x.aborted) x.res.close();
  } finally {
    x.release?.();
  }
}

