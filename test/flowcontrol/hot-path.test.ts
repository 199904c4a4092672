/**
 * What the front thread does per request in API Priority and Fairness when nothing waits:
 * no scan of the levels' queues on release, one shared classification (and header pair) per
 * FlowSchema of a level without queues, one shared estimate for a one-seat request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, Level, flowHash, type LevelConfig } from '../../src/flowcontrol/dispatcher.js';
import { PriorityAndFairness } from '../../src/flowcontrol/priority-fairness.js';
import { apfDefaults } from '../../src/flowcontrol/defaults.js';
import { estimateWork } from '../../src/flowcontrol/work-estimate.js';
import { makeIdentity } from '../../src/api/identity.js';
import { parseRequestInfo } from '../../src/http/request-info.js';
import type { UserInfo } from '../../src/api/user.js';

const limited = (name: string): LevelConfig => ({
  name,
  uid: name,
  exempt: false,
  shares: 10,
  lendablePercent: 50,
  borrowingLimitPercent: undefined,
  reject: false,
  queues: 64,
  handSize: 6,
  queueLengthLimit: 50,
});

/** Counts Level.peek calls (each one scans every queue of its level) while fn runs. */
function peeksDuring(fn: () => void): number {
  const original = Level.prototype.peek;
  let calls = 0;
  Level.prototype.peek = function (this: Level) {
    calls++;
    return original.call(this);
  };
  try {
    fn();
  } finally {
    Level.prototype.peek = original;
  }
  return calls;
}

test('releasing a seat while no request waits anywhere scans no queue', () => {
  const d = new Dispatcher(60, 60_000);
  d.configure([...['a', 'b', 'c', 'd', 'e'].map(limited), { ...limited('x'), exempt: true, queues: 0 }]);
  const releases: (() => void)[] = [];
  const peeks = peeksDuring(() => {
    for (const lvl of ['a', 'x', 'c']) d.admit(lvl, flowHash('f'), (release) => releases.push(release), assert.fail);
    for (const release of releases) release();
  });
  assert.equal(releases.length, 3);
  assert.equal(peeks, 0);
  assert.equal(d.levels.get('a')!.executing, 0);
});

test('a release still hands its seat to a request queued in another level (only that level is looked at)', () => {
  const d = new Dispatcher(2, 60_000);
  d.configure([
    { ...limited('a'), shares: 1, lendablePercent: 0 },
    { ...limited('b'), shares: 1, lendablePercent: 0 },
  ]);
  let release: () => void = () => assert.fail('not admitted');
  d.admit('a', flowHash('f'), (r) => (release = r), assert.fail);
  let second: (() => void) | undefined;
  d.admit('a', flowHash('f'), (r) => (second = r), assert.fail);
  assert.equal(second, undefined, 'queued behind the first');
  const peeks = peeksDuring(() => release());
  assert.ok(second, 'dispatched by the release');
  // pump's two passes look at level a (the waiter, then nothing left); level b is never scanned
  assert.ok(peeks >= 1 && peeks <= 3, `peeks ${peeks}`);
});

test('requests of a level without queues share one classification; queued levels get their flow', () => {
  const identity = makeIdentity();
  const apf = new PriorityAndFairness(identity, 600, 15_000);
  const defaults = apfDefaults(identity);
  const objects = [
    ...defaults.mandatory.flowSchemas.map((o) => ({ key: apf.schemaKey, o })),
    ...defaults.mandatory.priorityLevels.map((o) => ({ key: apf.levelKey, o })),
    ...defaults.suggested.flowSchemas.map((o) => ({ key: apf.schemaKey, o })),
    ...defaults.suggested.priorityLevels.map((o) => ({ key: apf.levelKey, o })),
  ];
  apf.load(
    objects.map(({ key, o }) => ({
      typeKey: key,
      namespace: '',
      name: o.metadata.name,
      apiVersion: defaults.apiVersion,
      json: JSON.stringify(o),
    })),
  );
  const info = parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps/one', new URLSearchParams());
  const admin: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const a = apf.classify(admin, info)!;
  const b = apf.classify({ ...admin, username: 'other' }, info)!;
  assert.equal(a.level!.name, 'exempt');
  assert.equal(a, b, 'the same object for every exempt request');
  assert.equal(a.headers[0], b.headers[0]);
  assert.deepEqual(a.headers, [
    [apf.headers.schema, a.schema.uid],
    [apf.headers.level, a.level!.uid],
  ]);
  const alice = apf.classify({ username: 'alice', groups: ['system:authenticated'] }, info)!;
  const bob = apf.classify({ username: 'bob', groups: ['system:authenticated'] }, info)!;
  assert.equal(alice.level!.name, 'global-default');
  assert.notEqual(alice.flow, bob.flow, 'ByUser: one flow per user');
  assert.equal(alice.headers, bob.headers, 'the header pair is shared');
  // a queued level's flow: one classification per flow, its hash computed once
  assert.equal(apf.classify({ username: 'alice', groups: ['system:authenticated'] }, info), alice);
  assert.equal(alice.hash, flowHash(alice.flow));
  assert.equal(bob.hash, flowHash(bob.flow));
  assert.equal(a.hash, 0, 'no flow in a level without queues');
  // admission through either classification counts in the same flow's metrics
  let releases = 0;
  for (const c of [a, b, alice, bob])
    apf.admit(
      c,
      info,
      new URLSearchParams(),
      (release) => {
        release();
        releases++;
      },
      assert.fail,
    );
  assert.equal(releases, 4);
  assert.match(
    apf.metricsText(),
    /apiserver_flowcontrol_dispatched_requests_total\{flow_schema="exempt",priority_level="exempt"\} 2/,
  );
});

test('a one-seat request gets the shared estimate; a wider one its own', () => {
  const counts = { objects: () => 5000, watchers: () => 0 };
  const get = parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps/one', new URLSearchParams());
  const list = parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps', new URLSearchParams());
  const q = new URLSearchParams();
  assert.equal(estimateWork(get, q, counts, 10), estimateWork(get, q, counts, 10));
  assert.ok(Object.isFrozen(estimateWork(get, q, counts, 10)));
  assert.deepEqual(estimateWork(list, q, counts, 10), { initialSeats: 10, finalSeats: 0, additionalLatencyMs: 0 });
  assert.notEqual(estimateWork(list, q, counts, 10), estimateWork(list, q, counts, 10));
});

test('acquireNow: seats at once while nothing waits in the level, else admit decides (queue, refusal)', () => {
  const d = new Dispatcher(2, 60_000);
  d.configure([
    { ...limited('a'), shares: 1, lendablePercent: 0 },
    { ...limited('b'), shares: 1, lendablePercent: 0 },
  ]);
  const one = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };
  const first = d.acquireNow('a', flowHash('f'), one);
  assert.ok(first, 'a free seat');
  assert.equal(d.acquireNow('a', flowHash('f'), one), undefined, 'no seat left');
  assert.equal(d.acquireNow('missing', flowHash('f'), one), undefined);
  let queued: (() => void) | undefined;
  const cancel = d.admit('a', flowHash('f'), (r) => (queued = r), assert.fail, one);
  assert.ok(cancel, 'waits in a queue');
  first();
  first();
  assert.ok(queued, 'the release (once) dispatched the waiter');
  assert.equal(d.levels.get('a')!.executing, 1);
  queued!();
  assert.equal(d.levels.get('a')!.executing, 0);
});
