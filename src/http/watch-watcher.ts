/**
 * What the watch hub (src/http/watch-hub.ts) writes to and how it converts: its watchers and
 * their sinks.
 */
import type { Encoding } from '../actors/protocol.js';
import type { Matcher } from '../api/watch-filter.js';
import type { Chunk } from '../codec/watch-encoding.js';

/** A stored object's JSON as another version of its resource (the registry's conversions). */
export type Convert = (typeKey: string, apiVersion: string, json: string) => string;

export interface WatchSink {
  /** writes bytes; returns the bytes currently buffered for this client (an estimate) */
  write(chunk: Chunk): number;
  /** ends the stream cleanly */
  close(): void;
  /** drops the connection at once (slow consumer) */
  abort(): void;
}

export interface Watcher {
  typeKey: string;
  namespace: string;
  matcher: Matcher | undefined;
  /** last version delivered (events at or below it are not sent again) */
  fromRV: number;
  /** the version the watch started at: bookmarks are sent only past it */
  startRV: number;
  sink: WatchSink;
  bookmarks: boolean;
  kind: string;
  apiVersion: string;
  closed: boolean;
  /** the stream encoding (format and view); watchers with the same streamKey share bytes */
  enc: Encoding;
  /** a Table view: whether the column definitions went out already (only the first event has them) */
  headersSent: boolean;
}
