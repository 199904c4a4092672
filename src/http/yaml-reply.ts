/**
 * YAML replies are encoded on an encoding thread of their own (issue 26 item 2). YAML is not
 * served from cached bytes, and encoding it on a shard actor held every write of the shard for
 * as long as the encoding took. The actor answers in compact JSON (its cached item bytes,
 * joined); the encoding thread (http/yaml-worker.ts) decodes and encodes it in slices. The
 * encoding stops when the client goes away or the request's deadline passes, and the request
 * keeps its in-flight (APF) seat until the reply is sent. Pretty JSON, not cached either, is
 * indented there too (one native call). Small values (Status replies) are still encoded in
 * place (codec.encode).
 */
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Encoding, Result } from '../actors/protocol.js';
import { GZIP_THRESHOLD } from '../actors/pack.js';
import { errors } from '../api/status.js';
import { contentTypeOf } from '../codec/codec.js';
import type { EncodeDone, EncodeRequest } from './yaml-protocol.js';

/** Counts for /metrics (platform_response_encodings_total and friends, server/front-metrics.ts). */
export const yamlEncodings = { completed: 0, timeout: 0, cancelled: 0, error: 0, values: 0 };

const gzipAsync = promisify(gzip);
const waiting = new Map<number, (d: EncodeDone) => void>();
let thread: Worker | undefined;
let nextId = 1;

/** Encodings started and not yet ended (stopped or finished) on the encoding thread. */
export function yamlEncodingsInProgress(): number {
  return waiting.size;
}

/** The encoding thread, started on first use; if it ever dies, its jobs fail and the next job starts another. */
function encodingThread(): Worker {
  if (thread) return thread;
  const w = new Worker(new URL('./yaml-worker.js', import.meta.url));
  w.unref();
  w.on('message', (d: EncodeDone) => {
    const done = waiting.get(d.id);
    waiting.delete(d.id);
    done?.(d);
  });
  const failAll = (message: string) => {
    if (thread === w) thread = undefined;
    for (const [id, done] of [...waiting]) {
      waiting.delete(id);
      done({ id, values: 0, outcome: 'error', message });
    }
  };
  w.on('error', (e: Error) => failAll(`YAML encoding thread failed: ${e.message}`));
  w.on('exit', (code) => failAll(`YAML encoding thread exited with ${code}`));
  return (thread = w);
}

/** Whether a reply in this encoding is encoded here rather than on the actor: YAML and pretty JSON (never cached). */
export function encodedOffActor(enc: Encoding): boolean {
  return enc.format === 'yaml' || (enc.format === 'json' && enc.pretty);
}

/** The encoding to ask the actor for: compact JSON when the reply is encoded here. */
export function actorEncoding(enc: Encoding): Encoding {
  if (!encodedOffActor(enc)) return enc;
  const json: Encoding = { format: 'json', pretty: false };
  if (enc.view) json.view = enc.view;
  return json;
}

/**
 * The actor's JSON reply as the YAML (or pretty JSON) reply the client asked for; a reply that is not JSON (an
 * error, plain text) is returned as it is. 'timeout' when the deadline (a performance.now()
 * time) passed first, 'aborted' when the client left: the encoding has stopped either way.
 */
export async function yamlReply(
  x: { readonly aborted: boolean; onAbort?: () => void },
  res: Result,
  enc: Encoding,
  deadline: number,
): Promise<Result | 'timeout' | 'aborted'> {
  if (!('code' in res) || !res.contentType.startsWith('application/json')) return res;
  if (x.aborted) return 'aborted';
  const pretty = enc.format === 'json';
  const d = await encode(x, res.body, deadline, pretty);
  if (!pretty) {
    yamlEncodings.values += d.values;
    yamlEncodings[d.outcome]++;
  }
  if (d.outcome === 'timeout') return 'timeout';
  if (d.outcome === 'cancelled') return 'aborted';
  if (d.outcome === 'error') return { id: res.id, error: errors.internal(d.message ?? 'YAML encoding failed').status };
  const { id, code, warnings } = res;
  const body = new Uint8Array(d.body!);
  const out: Result = { id, code, body, contentType: contentTypeOf(enc), ...(warnings ? { warnings } : {}) };
  // compressed on libuv's thread pool, not on the front thread's event loop
  if (enc.gzip && body.byteLength >= GZIP_THRESHOLD)
    return { ...out, body: await gzipAsync(body, { level: 1 }), contentEncoding: 'gzip' };
  return out;
}

/** Sends the JSON to the encoding thread (a copy: a packed body shares its buffer) and waits for the job's end. */
function encode(
  x: { onAbort?: () => void },
  json: string | Uint8Array,
  deadline: number,
  pretty: boolean,
): Promise<EncodeDone> {
  const w = encodingThread();
  const id = nextId++;
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const ended = new Promise<EncodeDone>((resolve) => waiting.set(id, resolve));
  const msg: EncodeRequest = { id, body: copy.buffer, ...(pretty ? { pretty: true as const } : {}) };
  if (Number.isFinite(deadline)) msg.deadline = Date.now() + Math.max(0, deadline - performance.now());
  w.postMessage(msg, [copy.buffer]);
  const prev = x.onAbort;
  x.onAbort = () => {
    prev?.();
    if (waiting.has(id)) w.postMessage({ id, cancel: true } satisfies EncodeRequest);
  };
  return ended;
}
