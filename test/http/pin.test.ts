/**
 * The pin of a checked write (src/http/pin.ts), in-process: what a check records, when a moved
 * object restarts the attempt, which write replies restart it, how many attempts there are, and
 * the body read once and replayed to every attempt. The end-to-end race is security/write-race.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ATTEMPTS, pinOf, pinTo, retried, retriedWrite, withPin, type PinState } from '../../src/http/pin.js';
import { StatusError, errors, type Status } from '../../src/api/status.js';
import type { Request } from '../../src/http/context.js';
import type { Result } from '../../src/registry/ops.js';

type Checked = Pick<Request, 'pin' | 'info' | 'def'>;

/** A request of `verb` on the ConfigMap "cm" (or a grouped kind), pinned with `pin`. */
function req(verb: string, pin: PinState | undefined, group = ''): Checked {
  return {
    pin,
    info: { verb, name: 'cm' } as Request['info'],
    def: { resource: group ? 'deployments' : 'configmaps', group } as Request['def'],
  };
}

const fresh = (again: () => boolean = () => false): PinState => ({ again });
const obj = (rv: unknown) => ({ metadata: { resourceVersion: rv } });

function moved(f: () => void): StatusError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof StatusError, `a StatusError, got ${String(e)}`);
    return e;
  }
  assert.fail('no error');
}

test('the first check records the version it saw; the same version again is fine', () => {
  const p = fresh();
  pinTo(req('update', p), obj('7'));
  assert.equal(p.rv, '7');
  pinTo(req('patch', p), obj('7'));
  assert.equal(p.rv, '7');
  assert.deepEqual(pinOf({ pin: p }), { pin: '7' });
});

test('no object (or no string resourceVersion) pins the empty version: the write must find no object', () => {
  for (const seen of [undefined, {}, obj(7), obj(undefined)]) {
    const p = fresh();
    pinTo(req('update', p), seen);
    assert.equal(p.rv, '', JSON.stringify(seen));
    assert.deepEqual(pinOf({ pin: p }), { pin: '' }, 'an empty pin still travels with the write');
  }
});

test('a create pins nothing, and an unpinned request records nothing', () => {
  const p = fresh();
  pinTo(req('create', p), obj('3'));
  assert.equal(p.rv, undefined);
  assert.deepEqual(pinOf({ pin: p }), {});
  assert.deepEqual(pinOf({}), {});
  pinTo(req('update', undefined), obj('3')); // no pin: nothing to throw at
});

test('a second check that saw another version: 409 Conflict naming the object, and the attempt restarts', () => {
  let restarts = 0;
  const p = fresh(() => {
    restarts++;
    return true;
  });
  pinTo(req('update', p), obj('7'));
  const e = moved(() => pinTo(req('update', p), obj('8')));
  assert.equal(e.status.code, 409);
  assert.equal(e.status.reason, 'Conflict');
  assert.equal(
    e.status.message,
    'Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again',
  );
  assert.deepEqual(e.status.details, { name: 'cm', kind: 'configmaps' });
  assert.equal(retried({ pin: p }, e), true);
  assert.equal(restarts, 1);
  const g = moved(() => {
    const q = fresh();
    pinTo(req('update', q, 'apps'), obj('1'));
    pinTo(req('update', q, 'apps'), undefined);
  });
  assert.equal(
    g.status.message,
    'Operation cannot be fulfilled on deployments.apps "cm": the object has been modified; please apply your changes to the latest version and try again',
  );
  assert.deepEqual(g.status.details, { name: 'cm', group: 'apps', kind: 'deployments' });
});

test('only a moved object restarts an attempt; other errors, unpinned requests and spent attempts reply', () => {
  let asked = 0;
  const p = fresh(() => {
    asked++;
    return true;
  });
  assert.equal(
    retried({ pin: p }, errors.conflict({ resource: 'configmaps', name: 'cm' }, 'x')),
    false,
    'a plain 409 of a check is the answer',
  );
  assert.equal(retried({ pin: p }, new Error('boom')), false);
  assert.equal(asked, 0, 'no restart asked for');
  pinTo(req('update', p), obj('1'));
  const e = moved(() => pinTo(req('update', p), obj('2')));
  assert.equal(retried({}, e), false, 'without a pin');
  assert.equal(retried({ pin: fresh(() => false) }, e), false, 'attempts used up');
});

test('a pinned write answered 409 Conflict restarts; any other answer, or an unpinned write, is the reply', () => {
  const conflict: Result = { id: 1, error: errors.conflict({ resource: 'configmaps', name: 'cm' }, 'moved').status };
  const other = (code: number, reason: string): Result => ({
    id: 1,
    error: { ...conflict.error, code, reason } as Status,
  });
  const ok: Result = { id: 1, code: 200, body: '{}', contentType: 'application/json' };
  let asked = 0;
  const pinned: PinState = {
    rv: '5',
    again: () => {
      asked++;
      return true;
    },
  };
  assert.equal(retriedWrite({ pin: pinned }, conflict), true);
  assert.equal(asked, 1);
  assert.equal(retriedWrite({ pin: pinned }, ok), false);
  assert.equal(retriedWrite({ pin: pinned }, other(409, 'AlreadyExists')), false, 'AlreadyExists is an answer');
  assert.equal(retriedWrite({ pin: pinned }, other(422, 'Conflict')), false);
  assert.equal(retriedWrite({ pin: pinned }, other(500, 'InternalError')), false);
  assert.equal(asked, 1, 'none of those asked for another attempt');
  assert.equal(
    retriedWrite({ pin: { again: () => true } }, conflict),
    false,
    'no check looked at the object: the 409 is the reply',
  );
  assert.equal(retriedWrite({}, conflict), false);
  assert.equal(retriedWrite({ pin: { rv: '', again: () => false } }, conflict), false, 'attempts used up');
  assert.equal(retriedWrite({ pin: { rv: '', again: () => true } }, conflict), true, 'an empty pin is a pin');
});

test(`withPin: at most ${MAX_ATTEMPTS} attempts, each with a fresh pin, the body read once and replayed to every one`, () => {
  assert.equal(MAX_ATTEMPTS, 5, "upstream's maxRetryWhenPatchConflicts");
  let reads = 0;
  const body = (done: (b: Buffer) => void) => {
    reads++;
    done(Buffer.from('payload'));
  };
  const r = { body, info: { verb: 'update' } } as unknown as Request;
  const pins: PinState[] = [];
  const bodies: string[] = [];
  const answers: boolean[] = [];
  withPin(r, 1024, (a) => {
    pins.push(a.pin!);
    a.body!(
      (b) => bodies.push(b.toString()),
      () => assert.fail('no failure'),
    );
    a.pin!.rv = String(pins.length);
    answers.push(a.pin!.again());
  });
  assert.equal(pins.length, MAX_ATTEMPTS);
  assert.equal(new Set(pins).size, MAX_ATTEMPTS, 'a new pin per attempt');
  assert.deepEqual(
    pins.map((p) => p.rv),
    ['1', '2', '3', '4', '5'],
  );
  // again() runs the next attempt before it returns: the answers arrive innermost first
  assert.deepEqual(answers, [false, true, true, true, true], 'the last attempt cannot restart');
  assert.deepEqual(bodies, Array(MAX_ATTEMPTS).fill('payload'));
  assert.equal(reads, 1, 'the body is read once');
  assert.equal(r.pin, undefined, 'the request itself is not pinned');
});

test('withPin: an attempt that is not retried is the only one; a failed read is replayed to every reader', () => {
  let reads = 0;
  const failure = errors.badRequest('unreadable').status;
  const r = {
    body: (_: unknown, fail: (s: Status) => void) => {
      reads++;
      fail(failure);
    },
    info: { verb: 'patch' },
  } as unknown as Request;
  let attempts = 0;
  const failures: Status[] = [];
  withPin(r, 1024, (a) => {
    attempts++;
    a.body!(
      () => assert.fail('no body'),
      (s) => failures.push(s),
    );
    a.body!(
      () => assert.fail('no body'),
      (s) => failures.push(s),
    );
  });
  assert.equal(attempts, 1);
  assert.deepEqual(failures, [failure, failure]);
  assert.equal(reads, 1);
});

test('withPin: readers waiting for a body still being read all get it when it arrives', () => {
  const pending: { deliver?: (b: Buffer) => void } = {};
  let reads = 0;
  const r = {
    body: (done: (b: Buffer) => void) => {
      reads++;
      pending.deliver = done;
    },
    info: { verb: 'update' },
  } as unknown as Request;
  const got: string[] = [];
  withPin(r, 1024, (a) => {
    a.body!(
      (b) => got.push(`a:${b.toString()}`),
      () => assert.fail('no failure'),
    );
    a.body!(
      (b) => got.push(`b:${b.toString()}`),
      () => assert.fail('no failure'),
    );
    assert.equal(got.length, 0, 'nothing before the read completes');
    pending.deliver!(Buffer.from('x'));
    a.body!(
      (b) => got.push(`c:${b.toString()}`),
      () => assert.fail('no failure'),
    );
  });
  assert.deepEqual(got, ['a:x', 'b:x', 'c:x']);
  assert.equal(reads, 1);
});
