/** A committed write's object in the stream encodings of the live watchers of its type. */
import type { StagedWrite } from '../registry/txn.js';
import type { Encoding } from './protocol.js';
import { encodeEventObject, streamKey } from '../codec/watch-encoding.js';

/**
 * Watch stage tracing for the bench (PLAT_WATCH_TRACE names the front's trace file,
 * src/http/watch-trace.ts): events then carry the time they were published after their commit.
 * Read once at load; unset, nothing is stamped.
 */
export const TRACE_EVENTS = (process.env.PLAT_WATCH_TRACE ?? '') !== '';

/**
 * The event's object once per stream encoding live watchers use, so the front thread writes
 * bytes instead of encoding per watcher. An object that cannot be encoded is left out: the
 * front thread's fallback then reports it to those watchers. kind: the type's kind.
 */
export function encodeForStreams(
  kind: string,
  w: StagedWrite,
  wanted: Encoding[],
  now: number,
): Record<string, string | Uint8Array> {
  const out: Record<string, string | Uint8Array> = {};
  for (const enc of wanted) {
    try {
      // Table views: the events after a watcher's first carry no column definitions
      out[streamKey(enc)] = encodeEventObject(
        enc,
        { kind, json: w.entry.json, obj: w.entry.obj, entry: w.entry },
        now,
        false,
      );
    } catch {
      /* encoded (and the failure reported) by the front thread */
    }
  }
  return out;
}
