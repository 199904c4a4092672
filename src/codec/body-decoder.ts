/**
 * Request bodies the front thread itself needs as objects (virtual kinds such as
 * SelfSubjectReview, the escalation and NodeRestriction previews, legacy bindings). Decoding is
 * linear in the body, but a large YAML body still takes the YAML parser many milliseconds per
 * 100 KB, and the front thread serves every connection: bodies over INLINE_DECODE_BYTES are
 * decoded in one worker thread (started on first use, gone after 5 s idle: piscina unrefs an
 * idle worker, so it never holds the process), so a hostile body delays only the requests that
 * need that worker, never /readyz or other clients.
 */
import { Piscina } from 'piscina';
import { fileURLToPath } from 'node:url';
import { decodeBody } from './codec.js';
import { StatusError, type Status } from '../api/status.js';

/** Bodies up to this size decode inline: cheaper than a thread hop, and bounded at ~1 ms of JSON or YAML. */
export const INLINE_DECODE_BYTES = 16 * 1024;

/** The worker's answer: the decoded object, or the Status decodeBody refused the body with. */
export type DecodeReply = { value: unknown } | { error: Status };

let apiDomain = 'plat.io';
let pool: Piscina | undefined;

/** A request body as decodeBody takes it. */
type Body = Parameters<typeof decodeBody>[0];

/** Sets the API domain the worker's Protobuf codec maps group names from (before first use). */
export function configureBodyDecoder(domain: string): void {
  apiDomain = domain;
}

/** decodeBody's result (or its StatusError), off the front thread when the body is large. */
export async function decodeRequestBody(body: Body): Promise<ReturnType<typeof decodeBody>> {
  const size = body.bytes ? body.bytes.length : body.text.length;
  if (size <= INLINE_DECODE_BYTES) return decodeBody(body);
  pool ??= new Piscina({
    filename: fileURLToPath(new URL('../../workers/body-decoder.js', import.meta.url)),
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 5_000,
    workerData: { apiDomain },
  });
  const reply = (await pool.run(body)) as DecodeReply;
  if ('error' in reply) throw new StatusError(reply.error);
  return reply.value;
}

/** Stops the worker now (tests; a server's process simply exits). */
export async function closeBodyDecoder(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}
