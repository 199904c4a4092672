/**
 * Response bodies cross the thread boundary as bytes in transferred ArrayBuffers: the actor UTF-8
 * encodes every string body once into one buffer per batch (work the otherwise idle actor can do),
 * LIST bodies built from cached item bytes travel in their own buffers; the front thread hands
 * zero-copy views to uWS instead of copying strings and converting them.
 */
import type { BatchReply, Result } from './protocol.js';
import { REUSE_MIN_BYTES } from '../codec/buffer-pool.js';
import { owned } from '../codec/codec.js';
import { gzipSync } from 'node:zlib';

/** Responses at least this large are gzipped when the client accepts it (upstream's threshold). */
export const GZIP_THRESHOLD = 128 * 1024;

/** A GET or LIST answer gzipped on the actor when its body is large (GZIP_THRESHOLD). */
export function compress(r: Result): Result {
  if (!('code' in r) || r.body.length < GZIP_THRESHOLD) return r;
  return { ...r, body: gzipSync(r.body, { level: 1 }), contentEncoding: 'gzip' };
}

/**
 * Packs the results' bodies for the trip to the front thread: owned byte bodies travel in their
 * own transferred buffers; strings (UTF-8 encoded here) and other bytes (copied once, instead of
 * twice by structured cloning) into reply.bodies. Returns the buffers to transfer.
 */
export function packBodies(reply: BatchReply): ArrayBuffer[] {
  const moved: ArrayBuffer[] = [];
  let total = 0;
  for (const r of reply.results) {
    if (!('code' in r)) continue;
    if (typeof r.body === 'string') total += Buffer.byteLength(r.body);
    else if (owned.has(r.body.buffer)) {
      owned.delete(r.body.buffer);
      moved.push(r.body.buffer as ArrayBuffer);
      r.ownBuffer = true;
    } else total += r.body.byteLength;
  }
  if (total === 0) return moved;
  const buf = new ArrayBuffer(total);
  const view = Buffer.from(buf);
  let at = 0;
  for (const r of reply.results) {
    if (
      !('code' in r) ||
      r.body.length === 0 ||
      (typeof r.body !== 'string' && moved.includes(r.body.buffer as ArrayBuffer))
    )
      continue;
    let len: number;
    if (typeof r.body === 'string') len = view.write(r.body, at);
    else {
      view.set(r.body, at);
      len = r.body.byteLength;
    }
    r.bodyRef = [at, len];
    r.body = '';
    at += len;
  }
  reply.bodies = buf;
  moved.push(buf);
  return moved;
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

/** Large bodies' buffers the front thread is done with, for the next batch to hand back (codec/buffer-pool.ts). */
let returned: ArrayBuffer[] = [];
let returnedBytes = 0;
/** beyond this the front lets the garbage collector have them */
const MAX_RETURNED_BYTES = 64 * 1024 * 1024;

/**
 * Called once a result's body was written and nothing else holds it (uWS copies what the
 * socket does not take at once): a body that travelled in a buffer of its own goes back to an
 * actor with the next batch, for reuse. Its views are empty afterwards.
 */
export function returnBody(r: Result): void {
  if (!('code' in r) || !r.ownBuffer || typeof r.body === 'string') return;
  const ab = r.body.buffer as ArrayBuffer;
  if (ab.byteLength < REUSE_MIN_BYTES || returnedBytes + ab.byteLength > MAX_RETURNED_BYTES) return;
  r.ownBuffer = false;
  returned.push(ab);
  returnedBytes += ab.byteLength;
}

/** The buffers returned since the last call (for a batch's transfer list). */
export function takeReturned(): ArrayBuffer[] | undefined {
  if (!returned.length) return undefined;
  const out = returned;
  returned = [];
  returnedBytes = 0;
  return out;
}
