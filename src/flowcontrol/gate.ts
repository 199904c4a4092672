/**
 * The API Priority and Fairness step of a request on the front thread: classify it, name the
 * matched objects in the response headers, then run it at once, when a seat frees (its body
 * keeps arriving meanwhile, and a client that leaves also leaves its queue), or refuse it.
 */
import { errors } from '../api/status.js';
import type { UserInfo } from '../api/user.js';
import { mayHaveBody, preReadBody } from '../filters/body.js';
import type { FilterRequest } from '../http/filter-request.js';
import { sendStatus } from '../http/exchange.js';
import type { RequestInfo } from '../http/request-info.js';
import type { Classification, PriorityAndFairness } from './priority-fairness.js';

/** What runs a request APF let through. */
export type Serve = (r: FilterRequest, info: RequestInfo, pretty: boolean) => void;

/** Runs `serve` when APF lets the request through; false when no FlowSchema classifies it. */
export function gate(
  apf: PriorityAndFairness,
  r: FilterRequest,
  user: UserInfo,
  info: RequestInfo,
  pretty: boolean,
  maxBody: number,
  serve: Serve,
): boolean {
  const { x } = r;
  const c = apf.classify(user, info);
  if (!c) return false;
  // usually the first headers of the reply: one exactly sized array
  if (x.headers.length === 0) x.headers = [c.headers[0], c.headers[1]];
  else x.headers.push(c.headers[0], c.headers[1]);
  // hot path: a request with free seats and nothing waiting runs now, with no callback made
  const release = apf.admitNow(c, info, r.query);
  if (!release) return queue(apf, c, r, info, pretty, maxBody, serve);
  if (x.aborted) release();
  else {
    x.release = release;
    serve(r, info, pretty);
  }
  return true;
}

/** A request that must wait for seats (or be refused). */
function queue(
  apf: PriorityAndFairness,
  c: Classification,
  r: FilterRequest,
  info: RequestInfo,
  pretty: boolean,
  maxBody: number,
  serve: Serve,
): true {
  const { x, method } = r;
  let waiting = false;
  const cancel = apf.admit(
    c,
    info,
    r.query,
    (release) => {
      if (x.aborted) return release();
      x.release = release;
      if (waiting) x.onAbort = undefined;
      serve(r, info, pretty);
    },
    () => {
      // upstream answers every APF rejection alike: 429 with Retry-After
      const refuse = () =>
        sendStatus(x, errors.tooManyRequests('Too many requests, please try again later.', 1).status, pretty);
      if (waiting && mayHaveBody(method) && r.body) return r.body(refuse, refuse);
      refuse();
    },
  );
  if (cancel) {
    // queued: keep the body coming (uWS needs onData now) and leave the queue if the client goes
    waiting = true;
    if (mayHaveBody(method) && !r.body) r.body = preReadBody(x, maxBody, r.headers.contentLength);
    x.onAbort = cancel;
  }
  return true;
}
