/**
 * The front thread's read cache (objects by type, namespace and name): counts, namespaces in
 * insertion order, deletes, apiVersion checks and the GET body bytes kept until a change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadCache } from '../../src/actors/read-cache.js';
import type { ChangeEvent, PodQuota } from '../../src/actors/protocol.js';

const event = (type: 'ADDED' | 'MODIFIED' | 'DELETED', namespace: string, name: string, json = `{"n":"${name}"}`) =>
  ({ type, typeKey: '/configmaps', namespace, name, apiVersion: 'v1', json }) as unknown as ChangeEvent;

test('objects by namespace and name: count, order within a namespace, delete, apiVersion', () => {
  const c = new ReadCache();
  c.load([
    { typeKey: '/configmaps', namespace: 'a', name: 'x', apiVersion: 'v1', json: '{"n":"x"}' },
    { typeKey: '/configmaps', namespace: 'b', name: 'y', apiVersion: 'v1', json: '{"n":"y"}' },
  ]);
  c.observe([event('ADDED', 'a', 'z'), event('MODIFIED', 'a', 'x', '{"n":"x2"}'), event('ADDED', 'a\u0000b', 'q')]);
  assert.equal(c.count('/configmaps'), 4);
  assert.deepEqual([...c.inNamespace('/configmaps', 'a')], ['{"n":"x2"}', '{"n":"z"}']);
  assert.deepEqual([...c.inNamespace('/configmaps', 'none')], []);
  assert.equal(c.get('/configmaps', 'a', 'x', 'v1'), '{"n":"x2"}');
  assert.equal(c.get('/configmaps', 'a', 'x', 'v2'), undefined);
  c.observe([event('DELETED', 'a', 'x'), event('DELETED', 'a', 'x'), event('DELETED', 'nowhere', 'x')]);
  assert.equal(c.count('/configmaps'), 3);
  assert.equal(c.get('/configmaps', 'a', 'x', 'v1'), undefined);
  c.observe([event('DELETED', 'a', 'z'), event('ADDED', 'a', 'z', '{"n":"z2"}')]);
  assert.deepEqual([...c.inNamespace('/configmaps', 'a')], ['{"n":"z2"}']);
  assert.equal(c.count('/configmaps'), 3);
  assert.equal(c.count('/secrets'), 0);
});

test('the GET body is the JSON and a newline, the same bytes until the object changes', () => {
  const c = new ReadCache();
  c.observe([event('ADDED', 'a', 'x')]);
  const first = c.body('/configmaps', 'a', 'x', 'v1')!;
  assert.equal(Buffer.from(first).toString(), '{"n":"x"}\n');
  assert.equal(c.body('/configmaps', 'a', 'x', 'v1'), first);
  assert.equal(c.body('/configmaps', 'a', 'x', 'v2'), undefined);
  c.observe([event('MODIFIED', 'a', 'x', '{"n":"x2"}')]);
  assert.equal(Buffer.from(c.body('/configmaps', 'a', 'x', 'v1')!).toString(), '{"n":"x2"}\n');
});

test('GET body bytes are kept for the objects read most recently only; an evicted one encodes the same bytes again', () => {
  const c = new ReadCache();
  c.bodiesMax = 3;
  const names = ['p0', 'p1', 'p2', 'p3', 'p4'];
  c.observe(names.map((n) => event('ADDED', 'a', n, `{"n":"${n}","é":1}`)));
  const first = names.map((n) => c.body('/configmaps', 'a', n, 'v1')!);
  assert.equal(c.bodiesHeld, 3, 'bounded');
  assert.equal(c.body('/configmaps', 'a', 'p4', 'v1'), first[4], 'a recent one: the same buffer');
  const again = c.body('/configmaps', 'a', 'p0', 'v1')!;
  assert.notEqual(again, first[0], 'p0 had let go of its bytes');
  assert.deepEqual(Buffer.from(again), Buffer.from(first[0]!), 'the same bytes');
  assert.equal(Buffer.from(again).toString(), '{"n":"p0","é":1}\n');
  assert.equal(c.bodiesHeld, 3);
  // a change or a delete drops the object's bytes from the count at once
  c.observe([event('MODIFIED', 'a', 'p0', '{"n":"p0b"}'), event('DELETED', 'a', 'p4')]);
  assert.equal(c.bodiesHeld, 1);
  assert.equal(Buffer.from(c.body('/configmaps', 'a', 'p0', 'v1')!).toString(), '{"n":"p0b"}\n');
  assert.equal(c.count('/configmaps'), 4);
});

const pod = (type: 'ADDED' | 'MODIFIED' | 'DELETED', namespace: string, name: string, quota?: PodQuota) =>
  ({
    type,
    typeKey: '/pods',
    namespace,
    name,
    apiVersion: 'v1',
    json: `{"pod":"${name}"}`,
    ...(quota ? { quota } : {}),
  }) as unknown as ChangeEvent;

test('Pods loaded at start keep no JSON: counted, their quota summaries by namespace, every read asks the actor', () => {
  const c = new ReadCache();
  const cpu = { requests: { cpu: 0.5 } };
  c.load([
    { typeKey: '/pods', namespace: 'a', name: 'p1', apiVersion: 'v1', json: '{"pod":"p1"}', quota: cpu },
    { typeKey: '/pods', namespace: 'a', name: 'p2', apiVersion: 'v1', json: '{"pod":"p2"}' },
    { typeKey: '/pods', namespace: 'b', name: 'p3', apiVersion: 'v1', json: '{"pod":"p3"}', quota: { finished: true } },
    { typeKey: '/configmaps', namespace: 'a', name: 'cm', apiVersion: 'v1', json: '{"n":"cm"}' },
  ]);
  assert.equal(c.count('/pods'), 3);
  assert.deepEqual([...c.podQuotas('a')], [cpu, undefined]);
  assert.deepEqual([...c.podQuotas('b')], [{ finished: true }]);
  assert.deepEqual([...c.podQuotas('none')], []);
  for (const [ns, name] of [
    ['a', 'p1'],
    ['a', 'p2'],
    ['b', 'p3'],
  ] as const) {
    assert.equal(c.get('/pods', ns, name, 'v1'), undefined);
    assert.equal(c.body('/pods', ns, name, 'v1'), undefined);
  }
  assert.equal(c.recentHeld, 0);
  assert.throws(() => [...c.inNamespace('/pods', 'a')], /holds no JSON of \/pods/);
  assert.equal(c.get('/configmaps', 'a', 'cm', 'v1'), '{"n":"cm"}', 'other kinds keep their JSON');
  // no Pod JSON string is reachable from the cache (its own fields, not only its methods)
  const strings: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    if (!v || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Map)
      for (const [k, x] of v) {
        walk(k);
        walk(x);
      }
    else if (v instanceof Set) for (const x of v) walk(x);
    else for (const x of Object.values(v)) walk(x);
  };
  walk(c);
  assert.deepEqual(
    strings.filter((s) => s.includes('"pod"')),
    [],
  );
  assert.ok(strings.includes('{"n":"cm"}'), 'the walk reaches the held JSON');
});

test('Pods written keep their JSON for the most recently written only; a change or delete leaves the order', () => {
  const c = new ReadCache();
  c.recentMax = 2;
  c.observe([pod('ADDED', 'a', 'p1'), pod('ADDED', 'a', 'p2', { limits: { memory: 1 } }), pod('ADDED', 'a', 'p3')]);
  assert.equal(c.recentHeld, 2);
  assert.equal(c.get('/pods', 'a', 'p1', 'v1'), undefined, 'the oldest let go of its JSON');
  assert.equal(c.get('/pods', 'a', 'p2', 'v1'), '{"pod":"p2"}');
  assert.equal(Buffer.from(c.body('/pods', 'a', 'p3', 'v1')!).toString(), '{"pod":"p3"}\n');
  assert.equal(c.bodiesHeld, 1);
  assert.deepEqual([...c.podQuotas('a')], [undefined, { limits: { memory: 1 } }, undefined]);
  c.observe([pod('ADDED', 'a', 'p4')]);
  assert.equal(c.get('/pods', 'a', 'p2', 'v1'), undefined);
  assert.equal(c.body('/pods', 'a', 'p3', 'v1') !== undefined, true);
  // p3 changed: its new JSON is the most recent (p4 is next to go); deleted: it leaves
  c.observe([pod('MODIFIED', 'a', 'p3', { finished: true })]);
  assert.equal(c.bodiesHeld, 0, "the replaced object's bytes are gone");
  c.observe([pod('DELETED', 'a', 'p4')]);
  assert.equal(c.recentHeld, 1);
  assert.equal(c.count('/pods'), 3);
  assert.deepEqual([...c.podQuotas('a')], [undefined, { limits: { memory: 1 } }, { finished: true }]);
  assert.equal(c.get('/pods', 'a', 'p3', 'v1'), '{"pod":"p3"}');
});

test('on a shared store (GETs not served from here) written Pods keep no JSON either', () => {
  const c = new ReadCache();
  c.servesGets = false;
  c.observe([pod('ADDED', 'a', 'p1', { finished: true }), event('ADDED', 'a', 'cm')]);
  assert.equal(c.recentHeld, 0);
  assert.equal(c.get('/pods', 'a', 'p1', 'v1'), undefined);
  assert.deepEqual([...c.podQuotas('a')], [{ finished: true }]);
  assert.equal(c.get('/configmaps', 'a', 'cm', 'v1'), '{"n":"cm"}', "other kinds' readers still need theirs");
});
