/**
 * The YAML encoding thread (http/yaml-reply.ts sends it work; it also indents pretty JSON). Jobs are encoded round-robin,
 * SLICE_MS at a time each, yielding to this thread's event loop between slices so that a
 * cancellation (the client left) is seen within a slice; a job past its deadline stops there.
 * Every job ends with exactly one EncodeDone, sent only once its encoder has stopped.
 */
import { parentPort } from 'node:worker_threads';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { YamlEncoder } from '../codec/yaml-encoder.js';
import { stringifyValue } from '../schema/deep-value.js';
import { SLICE_MS, type EncodeDone, type EncodeRequest } from './yaml-protocol.js';

interface Job {
  id: number;
  encoder: YamlEncoder;
  deadline: number;
}

/**
 * Below the front thread and the shard actors: on Linux a thread has its own nice value, and
 * setPriority(0, ...) sets the calling thread's, so when the CPUs are busy, request handling and
 * writes run first and encoding takes what is left (elsewhere this may apply to the process or
 * be refused: then it is skipped).
 */
export const ENCODING_NICE = 10;
try {
  setPriority(0, ENCODING_NICE);
} catch {
  /* not permitted: encode at normal priority */
}

const port = parentPort!;
const jobs = new Map<number, Job>();
let scheduled = false;

function finish(job: Job, done: Omit<EncodeDone, 'id' | 'values'>, transfer: ArrayBuffer[] = []): void {
  jobs.delete(job.id);
  port.postMessage({ id: job.id, values: job.encoder.nodes, ...done } satisfies EncodeDone, transfer);
}

/** The finished text as UTF-8 in a buffer of its own (transferred, not copied). */
function ownBytes(text: string): ArrayBuffer {
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  out.write(text, 0);
  return out.buffer as ArrayBuffer;
}

/** One slice of every job, then again on the next turn while any is left. */
function round(): void {
  scheduled = false;
  for (const job of [...jobs.values()]) {
    const left = job.deadline - Date.now();
    if (left <= 0) {
      finish(job, { outcome: 'timeout' });
      continue;
    }
    if (!job.encoder.step(performance.now() + Math.min(SLICE_MS, left))) continue;
    const body = ownBytes(job.encoder.text());
    finish(job, { outcome: 'completed', body }, [body]);
  }
  schedule();
}

function schedule(): void {
  if (scheduled || jobs.size === 0) return;
  scheduled = true;
  setImmediate(round);
}

port.on('message', (m: EncodeRequest) => {
  if (m.cancel) {
    const job = jobs.get(m.id);
    if (job) finish(job, { outcome: 'cancelled' });
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(m.body!).toString('utf8'));
  } catch (e) {
    port.postMessage({ id: m.id, values: 0, outcome: 'error', message: (e as Error).message } satisfies EncodeDone);
    return;
  }
  if (m.pretty) {
    // indented JSON is one native call: not sliced, but off the shard actors
    const body = ownBytes(stringifyValue(value, 2));
    port.postMessage({ id: m.id, values: 0, outcome: 'completed', body } satisfies EncodeDone, [body]);
    return;
  }
  jobs.set(m.id, { id: m.id, encoder: new YamlEncoder(value), deadline: m.deadline ?? Infinity });
  schedule();
});
