/**
 * LIST of a collection: one actor read, or for a long list without a limit its first page
 * within the request's timeout and the rest streamed (list-stream.ts).
 */
import { sendStatus } from '../http/exchange.js';
import type { Request, Services } from '../http/context.js';
import { firstPage, streamList, streamable, type ListOp } from './list-stream.js';
import { listOptions, opEncoding, typeRef } from '../http/request-ops.js';
import { errorStatus, run } from './run.js';

export function serveList(r: Request, s: Services): void {
  const op: ListOp = {
    type: typeRef(r),
    enc: opEncoding(r),
    op: 'list',
    namespace: r.info.namespace,
    opts: listOptions(r.query),
  };
  if (!streamable(r)) return void run(r, s, op);
  // the first page answers within the request's timeout; a list longer than a page then streams
  void run(r, s, firstPage(op), (first) => streamList(r, s, op, first)).catch((e) =>
    sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc),
  );
}
