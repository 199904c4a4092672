/**
 * Body pre-read for asynchronous filters: uWS requires `onData` to be registered before the
 * request handler returns, so when authentication has to wait (a JWT signature check) the body
 * starts buffering at once and the handler later receives it through the same reader shape.
 */
import { readBody, type Exchange } from '../http/exchange.js';
import type { Status } from '../api/status.js';
import type { BodyReader } from '../http/context.js';

/** Starts reading now; the returned reader delivers the outcome (once) whenever it is asked. */
export function preReadBody(x: Exchange, limit: number, declared: number): BodyReader {
  let outcome: { body: Buffer } | { status: Status } | undefined;
  let waiter: { done: (b: Buffer) => void; fail: (s: Status) => void } | undefined;
  const settle = (o: { body: Buffer } | { status: Status }) => {
    if (outcome) return;
    outcome = o;
    if (waiter) deliver(waiter.done, waiter.fail);
  };
  const deliver = (done: (b: Buffer) => void, fail: (s: Status) => void) => {
    if ('body' in outcome!) done(outcome.body);
    else fail(outcome!.status);
  };
  readBody(
    x,
    limit,
    declared,
    (body) => settle({ body }),
    (status) => settle({ status }),
  );
  return (done, fail) => {
    if (outcome) deliver(done, fail);
    else waiter = { done, fail };
  };
}

/** Methods whose requests may carry a body worth pre-reading. */
export function mayHaveBody(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}
