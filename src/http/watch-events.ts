/** The hub's own watch events: BOOKMARK and ERROR frames in a stream's encoding. */
import type { Encoding } from '../actors/protocol.js';
import type { Status } from '../api/status.js';
import { errors } from '../api/status.js';
import { bookmarkObject, encodeValue, frameEvent, type Chunk } from '../codec/watch-encoding.js';

/** A BOOKMARK event in the stream encoding (its object carries only the version). */
export function bookmarkEvent(
  enc: Encoding,
  kind: string,
  apiVersion: string,
  rv: number,
  annotations?: Record<string, string>,
): Chunk {
  return frameEvent(enc, 'BOOKMARK', encodeValue(enc, bookmarkObject(enc.view, kind, apiVersion, rv, annotations)));
}

/** An ERROR event carrying a Status (its code, e.g. 410, is inside the object). */
export function errorEvent(enc: Encoding, status: Status): Chunk {
  return frameEvent(enc, 'ERROR', encodeValue(enc, { ...status, kind: 'Status', apiVersion: 'v1' }));
}

/** The ERROR event of an object that could not be encoded for a stream. */
export function encodeError(enc: Encoding, e: unknown): Chunk {
  return errorEvent(enc, errors.internal(`unable to encode watch object: ${(e as Error).message}`).status);
}

/** The ERROR event's Status for a watch from a version no longer kept. */
export function expiredStatus(rv: number, oldest: number): Status {
  return errors.gone(`too old resource version: ${rv} (${oldest})`).status;
}
