/** What the actor (encode-helper.ts) and its helper thread (encode-helper-worker.ts) exchange. */
import type { MessagePort } from 'node:worker_threads';

/** Cells of the shared flags: the helper's state, and the number of chunks answered. */
export const STATE = 0;
export const DONE = 1;
export const STARTING = 0;
export const READY = 1;
export const GONE = 2;

export interface HelperData {
  port: MessagePort;
  flags: SharedArrayBuffer;
  /** the chunks' texts, one chunk per slot */
  slots: SharedArrayBuffer[];
  apiDomain?: string;
  /** tests: the thread exits on receiving chunk number exitAt (1-based) */
  exitAt?: number;
  /** the thread's own scheduling priority (nice), set at its start: 19 for encode-ahead.ts's helper, which takes idle CPU only */
  nice?: number;
}

/** A chunk: `count` texts back to back in a slot, text j ending at ends[j] (an empty span: not sent). */
export interface Chunk {
  id: number;
  slot: number;
  apiVersion: string;
  kind: string;
  ends: Int32Array;
  count: number;
}

export interface Answer {
  id: number;
  /** the chunk's item bytes back to back (shared: kept by the actor as a slab) */
  out: SharedArrayBuffer;
  lens: Int32Array;
}
