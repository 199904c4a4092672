/**
 * Pinning a write to the object its checks saw. Admission, NodeRestriction, escalation
 * prevention and the signer checks look at a preview of a write (a dry run) or at the stored
 * object, on the front thread; the write then runs later in the actor. Without a pin the write
 * would apply the patch again to whatever is current by then, and a concurrent write in between
 * would store an object nobody checked. So every check records the resourceVersion of the
 * object it looked at (`pinTo`), all checks of one attempt must agree on it, and the write
 * carries it (Op `pin`): the actor refuses any other state with 409 Conflict. A conflict of a
 * pinned write runs the whole attempt again (new previews, new checks), as upstream's
 * GuaranteedUpdate retries its tryUpdate, at most MAX_ATTEMPTS times; then the 409 is the reply.
 */
import { StatusError, errors, type Status } from '../api/status.js';
import { readBody } from './exchange.js';
import type { Result } from '../actors/protocol.js';
import type { BodyReader, PinState, Request } from './context.js';

export type { PinState };

/** upstream patcher: maxRetryWhenPatchConflicts = 5 */
export const MAX_ATTEMPTS = 5;

/** A moved object between two checks of one attempt: the attempt starts over (or answers 409). */
class PinMoved extends StatusError {}

/**
 * Records that a check looked at `obj` (a preview or the stored object; undefined = none). A
 * different version than an earlier check of the same attempt saw means the object moved.
 */
export function pinTo(r: Pick<Request, 'pin' | 'info' | 'def'>, obj: unknown): void {
  const p = r.pin;
  // a create stores its body: nothing to pin
  if (!p || r.info.verb === 'create') return;
  const meta = (obj as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata;
  const rv = typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : '';
  if (p.rv === undefined) p.rv = rv;
  else if (p.rv !== rv) {
    const t = { resource: r.def.resource, group: r.def.group, name: r.info.name };
    throw new PinMoved(
      errors.conflict(t, 'the object has been modified; please apply your changes to the latest version and try again')
        .status,
    );
  }
}

/** The op field of a pinned write (nothing when no check looked at the object). */
export function pinOf(r: Pick<Request, 'pin'>): { pin?: string } {
  return r.pin?.rv === undefined ? {} : { pin: r.pin.rv };
}

/**
 * A check of a pinned attempt failed with `e`: when the object moved between two checks the
 * attempt starts over and the answer is true (nothing to reply); else false (reply the error).
 */
export function retried(r: Pick<Request, 'pin'>, e: unknown): boolean {
  return e instanceof PinMoved && !!r.pin && r.pin.again();
}

/**
 * The pinned write's own reply: a 409 Conflict means the object moved after the checks (or the
 * request's own resourceVersion is stale, which the next attempt's preview answers), so the
 * attempt starts over; answers whether it did.
 */
export function retriedWrite(r: Pick<Request, 'pin'>, res: Result): boolean {
  return (
    'error' in res &&
    res.error.code === 409 &&
    res.error.reason === 'Conflict' &&
    r.pin?.rv !== undefined &&
    r.pin.again()
  );
}

/**
 * Runs `attempt` with a fresh pin until it is not retried. The body is read once and replayed
 * to every attempt (a failure to read it is replayed too).
 */
export function withPin(r: Request, maxBody: number, attempt: (r: Request) => void): void {
  const body = replayable(r.body ?? ((done, fail) => readBody(r.x, maxBody, r.headers.contentLength, done, fail)));
  let left = MAX_ATTEMPTS;
  const run = (): void => {
    left--;
    attempt({
      ...r,
      body,
      pin: {
        again: () => {
          if (left <= 0) return false;
          run();
          return true;
        },
      },
    });
  };
  run();
}

function replayable(read: BodyReader): BodyReader {
  let got: { buf: Buffer } | { status: Status } | undefined;
  const waiting: [(b: Buffer) => void, (s: Status) => void][] = [];
  let started = false;
  return (done, fail) => {
    if (got) return 'buf' in got ? done(got.buf) : fail(got.status);
    waiting.push([done, fail]);
    if (started) return;
    started = true;
    read(
      (buf) => {
        got = { buf };
        for (const [d] of waiting.splice(0)) d(buf);
      },
      (status) => {
        got = { status };
        for (const [, f] of waiting.splice(0)) f(status);
      },
    );
  };
}
