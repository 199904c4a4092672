/**
 * GET /openapi/v2 as kube-openapi serves it: JSON or gnostic Protobuf by Accept (the first
 * acceptable range in q order; `*` matches JSON first; nothing acceptable is a bare 406),
 * `Vary: Accept`, and an ETag (SHA-512 of the JSON bytes, upper-case hex, quoted) shared by
 * both encodings, answered with 304 when If-None-Match names it. Both bodies are built once
 * per document (the document object changes only when the served set does).
 */
import { createHash } from 'node:crypto';
import { encodeOpenAPIV2, OPENAPI_V2_PROTOBUF } from '../api/openapi-v2-protobuf.js';
import { send, type Exchange } from '../server/http.js';
import { parseAccept } from '../server/negotiation.js';
import type { RequestHeaders } from './context.js';

interface Encoded { json: string; etag: string; protobuf?: Uint8Array }

const encoded = new WeakMap<object, Encoded>();

function encodingsOf(doc: Record<string, unknown>): Encoded {
  let e = encoded.get(doc);
  if (!e) {
    const json = JSON.stringify(doc);
    e = { json, etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"` };
    encoded.set(doc, e);
  }
  return e;
}

/**
 * The Content-Type of a Protobuf reply: kube-openapi answers the requested type with `.` for
 * `@` (a media type token cannot hold `@`; Go's mime parser, hence client-go, refuses it).
 */
export const OPENAPI_V2_PROTOBUF_RETURNED = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** [type, subtype] → the served media type, in kube-openapi's preference order. */
const OFFERED: [string, string, string][] = [
  ['application', 'json', 'application/json'],
  ['application', OPENAPI_V2_PROTOBUF.slice('application/'.length), OPENAPI_V2_PROTOBUF_RETURNED],
];

function chosen(accept: string | undefined): string | undefined {
  for (const range of parseAccept(accept || '*/*')) {
    const [type, sub = ''] = range.type.split('/');
    const hit = OFFERED.find(([t, s]) => (type === t || type === '*') && (sub === s || sub === '*'));
    if (hit) return hit[2];
  }
  return undefined;
}

export function serveOpenAPIV2(x: Exchange, headers: RequestHeaders, doc: Record<string, unknown>): void {
  x.headers.push(['Vary', 'Accept']);
  const type = chosen(headers.accept);
  if (!type) return send(x, 406, 'text/plain; charset=utf-8', '');
  const e = encodingsOf(doc);
  x.headers.push(['Etag', e.etag]);
  if (headers.ifNoneMatch !== undefined && headers.ifNoneMatch.split(',').some((t) => t.trim() === e.etag || t.trim() === '*')) {
    return send(x, 304, type, '');
  }
  if (type === OPENAPI_V2_PROTOBUF_RETURNED) return send(x, 200, type, e.protobuf ??= encodeOpenAPIV2(doc));
  send(x, 200, type, e.json);
}
