/**
 * Response bodies cross the thread boundary as bytes in one transferred ArrayBuffer per batch:
 * the actor UTF-8 encodes every string body once into it (work the otherwise idle actor can do),
 * the front thread hands zero-copy views to uWS instead of copying strings and converting them.
 */
import type { BatchReply } from './protocol.js';

/** Responses at least this large are gzipped when the client accepts it (upstream's threshold). */
export const GZIP_THRESHOLD = 128 * 1024;

/** Packs string bodies of the results into reply.bodies; results keep [offset, length]. */
export function packBodies(reply: BatchReply): ArrayBuffer | undefined {
  let total = 0;
  for (const r of reply.results) if ('code' in r && typeof r.body === 'string') total += Buffer.byteLength(r.body);
  if (total === 0) return undefined;
  const buf = new ArrayBuffer(total);
  const view = Buffer.from(buf);
  let at = 0;
  for (const r of reply.results) {
    if (!('code' in r) || typeof r.body !== 'string') continue;
    const len = view.write(r.body, at);
    r.bodyRef = [at, len];
    r.body = '';
    at += len;
  }
  reply.bodies = buf;
  return buf;
}

/** Restores each packed body as a view into the transferred buffer. */
export function unpackBodies(reply: BatchReply): void {
  const buf = reply.bodies;
  if (!buf) return;
  for (const r of reply.results) {
    if ('code' in r && r.bodyRef) r.body = new Uint8Array(buf, r.bodyRef[0], r.bodyRef[1]);
  }
}

/** The text of a result body, whether it arrived as a string or as packed bytes. */
export function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}
