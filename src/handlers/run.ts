/**
 * What every resource verb shares on the front thread: reading the request body in the format
 * its Content-Type names, submitting one actor operation under the request's timeout, and
 * writing the actor's already-encoded bytes (or the Status of a failure) back.
 */
import { errors, type Status } from '../api/status.js';
import type { Body, Result } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { bodyFormat, cborEnabled, toBody } from '../http/negotiation.js';
import { patchBody } from '../http/patch-request.js';
import { readBody, sendStatus } from '../http/exchange.js';
import type { BodyReader, Request, Services } from '../http/context.js';
import { submitWaitingForRV } from './watch.js';
import { parseDuration } from '../api/duration.js';
import { reply } from '../http/reply.js';
import { retriedWrite } from '../http/pin.js';
import { actorEncoding, encodedOffActor, yamlReply } from '../http/yaml-reply.js';

/**
 * Submits the operation; the `timeout` query parameter (kubectl sends one on every request)
 * bounds how long the client waits: past it the reply is a 504 Timeout Status. The operation
 * itself is not cancelled (a write may still commit, as upstream); a YAML reply's encoding,
 * which runs here after the actor answered, stops at the same deadline.
 */
export async function run(
  r: Request,
  s: Services,
  op: OpInput,
  done?: (res: Result) => void | Promise<void>,
): Promise<void> {
  let limitMs: number | undefined;
  try {
    // validated before anything is submitted: a bad timeout must not leave a write behind
    limitMs = requestTimeoutMs(r.query.get('timeout'));
    // --request-timeout bounds every non-watch request; the parameter can only shorten it
    if (s.options.requestTimeoutMs > 0 && (limitMs === undefined || limitMs > s.options.requestTimeoutMs))
      limitMs = s.options.requestTimeoutMs;
  } catch (e) {
    return sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc);
  }
  const deadline = limitMs === undefined ? Infinity : performance.now() + limitMs;
  // YAML and pretty JSON are encoded off the shard actor, on the encoding thread (http/yaml-reply.ts)
  const wanted = op.enc;
  const offActor = encodedOffActor(wanted);
  if (offActor) op = { ...op, enc: actorEncoding(wanted) } as OpInput;
  const pending = op.op === 'get' || op.op === 'list' ? submitWaitingForRV(s, op) : s.pool.submit(op);
  let res: Result | 'timeout' | 'aborted';
  res = limitMs === undefined ? await pending : await within(pending, limitMs);
  // an error passes through as it is (rendered, and a conflicting pinned write retried, by done)
  if (res !== 'timeout' && offActor) res = await yamlReply(r.x, res, wanted, deadline);
  if (res === 'timeout')
    sendStatus(
      r.x,
      errors.timeout(`request did not complete within requested timeout - context deadline exceeded`).status,
      r.enc.pretty,
      r.enc,
    );
  else if (res === 'aborted') return;
  else if (done) await done(res);
  // by default the result is the reply (a conflicting pinned write is retried instead)
  else if (!retriedWrite(r, res)) reply(r, res);
}

/**
 * The operation's result, or 'timeout' when limitMs passes first (the timer is cleared when the
 * result comes): one promise settled by whichever side comes first, where Promise.race of the
 * result and a timer's promise made three promises, their reactions and the race's array per request.
 */
function within<T>(pending: Promise<T>, limitMs: number): Promise<T | 'timeout'> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, limitMs, 'timeout');
    pending.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

function requestTimeoutMs(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const ms = parseDuration(v);
  if (ms === undefined) throw errors.badRequest(`invalid timeout: "${v}": must be a duration such as 30s`);
  return ms > 0 ? ms : undefined;
}

/** Reads the body, then runs next; errors from next become Status replies. */
export function withBody(
  r: Request,
  s: Services,
  next: (body: Body) => Promise<void> | void,
  optional = false,
  patch = false,
): void {
  const format =
    optional || patch
      ? 'json'
      : bodyFormat(r.headers.contentType, r.def.custom ? undefined : s.protobufMediaType, cborEnabled(s.options));
  const read: BodyReader =
    r.body ?? ((done, fail) => readBody(r.x, s.options.maxRequestBodyBytes, r.headers.contentLength, done, fail));
  read(
    (buf) => {
      if (!optional && buf.length === 0)
        return sendStatus(r.x, errors.badRequest('request body must not be empty').status);
      // next runs in a microtask (as it did behind Promise.resolve().then): a throw or a rejection is the Status
      queueMicrotask(() => {
        const fail = (e: unknown) => sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc);
        try {
          next(patch ? patchBody(r, buf) : optional ? optionsBody(r, s, buf) : toBody(format, buf))?.catch(fail);
        } catch (e) {
          fail(e);
        }
      });
    },
    (st) => sendStatus(r.x, st, r.enc.pretty, r.enc),
  );
}

export function errorStatus(e: unknown) {
  return (e as { status?: unknown }).status ? (e as { status: Status }).status : errors.internal(String(e)).status;
}

/**
 * The body of a DELETE (DeleteOptions) in any encoding the server reads elsewhere: JSON, YAML,
 * Protobuf (the `k8s\0` envelope, custom resources included: the options are a meta type) and
 * CBOR when enabled; an empty body is no options. Another Content-Type is a 415.
 */
function optionsBody(r: Request, s: Services, buf: Buffer): Body {
  if (buf.length === 0) return toBody('json', buf);
  return toBody(bodyFormat(r.headers.contentType, s.protobufMediaType, cborEnabled(s.options)), buf);
}
