import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) {
    await s.stop();
    s.cleanup();
  }
});

async function server(args: string[], dataDir?: string): Promise<TestServer> {
  const s = await startServer(args, dataDir);
  servers.push(s);
  return s;
}

/**
 * One `--event-ttl 1s` server for the tests that need nothing else of it (distinct object names):
 * started by whichever of them runs first, so each still runs alone.
 */
let ttl1s: Promise<TestServer> | undefined;
const oneSecondTtl = (): Promise<TestServer> => (ttl1s ??= server(['--event-ttl', '1s']));

const EVENTS = (ns: string) => `/api/v1/namespaces/${ns}/events`;

function event(name: string, count = 1) {
  return {
    metadata: { name },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
    reason: 'Started',
    message: 'started',
    type: 'Normal',
    count,
    source: { component: 'test' },
  };
}

async function create(base: string, ns: string, name: string): Promise<any> {
  const r = await request(base, 'POST', EVENTS(ns), event(name));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/** Polls until GET answers 404; returns when (bounded by deadlineMs). */
async function goneBy(base: string, path: string, deadlineMs: number): Promise<number> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if ((await request(base, 'GET', path)).status === 404) return Date.now();
    await new Promise((r) => setTimeout(r, 50));
  }
  return assert.fail(`${path} still there after ${deadlineMs} ms`);
}

test('--event-ttl: an Event is deleted (watch sees DELETED) ttl after its last write; an update renews the lease', async () => {
  const s = await server(['--event-ttl', '2s']);
  const t0 = Date.now();
  const a = await create(s.url, 'default', 'ttl-a');
  await create(s.url, 'default', 'ttl-b');
  const w = await openWatch(s.url, `${EVENTS('default')}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
  try {
    // time has to pass between the create and the renewing write (this delay is the scenario, not a synchronisation)
    await new Promise((r) => setTimeout(r, 1000));
    const got = (await request(s.url, 'GET', `${EVENTS('default')}/ttl-b`)).json;
    got.count = 2;
    const renewedAt = Date.now();
    const u = await request(s.url, 'PUT', `${EVENTS('default')}/ttl-b`, got);
    assert.equal(u.status, 200, u.text);

    await w.waitFor(
      (evs) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'ttl-a'),
      'ttl-a DELETED',
      10_000,
    );
    const aGone = Date.now();
    assert.ok(aGone - t0 >= 1900, `ttl-a deleted after ${aGone - t0} ms, before its ttl`);
    assert.ok(
      !w.events.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'ttl-b'),
      'ttl-b outlives ttl-a: its update renewed the lease',
    );

    await w.waitFor(
      (evs) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'ttl-b'),
      'ttl-b DELETED',
      10_000,
    );
    assert.ok(Date.now() - renewedAt >= 1900, 'ttl-b lives ttl after its last write');
    const del = w.events.find((e) => e.type === 'DELETED' && e.object.metadata.name === 'ttl-b')!;
    assert.equal(del.object.count, 2, 'the DELETED event carries the last state');
    assert.equal((await request(s.url, 'GET', `${EVENTS('default')}/ttl-b`)).status, 404);
  } finally {
    w.close();
  }
});

test('--event-ttl: other kinds never expire; a dry-run create leaves no lease behind', async () => {
  const s = await oneSecondTtl();
  const cm = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'keep' },
    data: { k: 'v' },
  });
  assert.equal(cm.status, 201, cm.text);
  const dry = await request(s.url, 'POST', `${EVENTS('default')}?dryRun=All`, event('dry'));
  assert.equal(dry.status, 201, dry.text);
  await create(s.url, 'default', 'marker');
  await goneBy(s.url, `${EVENTS('default')}/marker`, 10_000);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/keep')).status, 200);
  assert.equal((await request(s.url, 'GET', `${EVENTS('default')}/dry`)).status, 404);
});

test('leases are durable: an Event written before a restart expires at its stored time, whatever the new --event-ttl', async () => {
  const first = await server(['--event-ttl', '5s']);
  const t0 = Date.now();
  await create(first.url, 'default', 'durable');
  await first.stop();
  // the restarted server would keep new Events for an hour; the stored lease still says 5s
  const second = await server(['--event-ttl', '1h'], first.dataDir);
  // (on a loaded machine the restart itself can outlast the lease: then the Event is rightly
  // deleted at start, and only the bounds below can be checked)
  const lookup = await request(second.url, 'GET', `${EVENTS('default')}/durable`);
  if (Date.now() - t0 < 4_000) assert.equal(lookup.status, 200, 'the Event survived the restart');
  const gone = await goneBy(second.url, `${EVENTS('default')}/durable`, 20_000);
  assert.ok(gone - t0 >= 4_900, `deleted ${gone - t0} ms after its write, not before its stored lease ran out`);
  // a new Event on the restarted server gets the new TTL
  await create(second.url, 'default', 'fresh');
  assert.equal((await request(second.url, 'GET', `${EVENTS('default')}/fresh`)).status, 200);
});

test('--event-ttl: Events written through events.plat.io/v1 expire too (the same stored objects)', async () => {
  const s = await oneSecondTtl();
  const path = '/apis/events.plat.io/v1/namespaces/default/events';
  const c = await request(s.url, 'POST', path, {
    metadata: { name: 'v1-ttl' },
    eventTime: '2025-01-01T00:00:00.000000Z',
    reportingController: 'platform.io/test',
    reportingInstance: 'i-1',
    action: 'Test',
    reason: 'Tested',
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'p' },
  });
  assert.equal(c.status, 201, c.text);
  const w = await openWatch(s.url, `${path}?watch=true&resourceVersion=${c.json.metadata.resourceVersion}`);
  try {
    await w.waitFor(
      (evs) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'v1-ttl'),
      'v1-ttl DELETED',
      10_000,
    );
    assert.equal(w.events.find((e) => e.type === 'DELETED')!.object.apiVersion, 'events.plat.io/v1');
  } finally {
    w.close();
  }
});

test('--event-ttl must be a duration', async () => {
  await assert.rejects(startServer(['--event-ttl', 'soon']), /--event-ttl must be a duration/);
});
