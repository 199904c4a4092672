/** Messages between the front thread (http/yaml-reply.ts) and the YAML encoding thread (http/yaml-worker.ts); plain data only. */

/** the longest the encoding thread works on one job before it looks at its messages and other jobs */
export const SLICE_MS = 4;

/**
 * A job (JSON bytes, transferred; deadline in ms since the epoch, absent for none; `pretty`:
 * indented JSON instead of YAML, one native call) or the cancellation of one.
 */
export interface EncodeRequest {
  id: number;
  body?: ArrayBuffer;
  deadline?: number;
  pretty?: true;
  cancel?: true;
}

/** How a job ended, with the values (collection entries) its encoder wrote. */
export interface EncodeDone {
  id: number;
  values: number;
  outcome: 'completed' | 'timeout' | 'cancelled' | 'error';
  /** the YAML text as UTF-8 (completed) */
  body?: ArrayBuffer;
  /** why the JSON did not decode (error) */
  message?: string;
}
