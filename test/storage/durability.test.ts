/**
 * Crash durability: a stream of concurrent creates, the server killed with SIGKILL while
 * creates are in flight, a restart on the same data directory; every acknowledged (201)
 * object must come back unchanged, and new writes must get versions above all seen before.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { createUntilKilled } from '../helpers/kill-stream.js';

const NS = 'durable';
const CLIENTS = 64;
const MAX_CREATES = 5000;
const MAX_MS = 3000;
/** kill once this many creates are acknowledged, or this much time has passed */
const KILL_AFTER_ACKS = 1500;
const KILL_AFTER_MS = 1500;

const servers: TestServer[] = [];
after(async () => {
  for (const t of servers) await t.stop('SIGKILL');
  servers[0]?.cleanup();
});

test('every acknowledged create survives SIGKILL and restart', async (t) => {
  const first = await startServer();
  servers.push(first);
  const ns = await request(first.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
  assert.equal(ns.status, 201);
  const cms = `/api/v1/namespaces/${NS}/configmaps`;
  const before = await request(first.url, 'GET', cms);
  let maxSeenRV = BigInt(before.json.metadata.resourceVersion);

  const { acks, unexpected, attempted, inFlightAtKill, code, signal, elapsedMs } = await createUntilKilled(first, cms, {
    clients: CLIENTS,
    maxCreates: MAX_CREATES,
    maxMs: MAX_MS,
    killAfterAcks: KILL_AFTER_ACKS,
    killAfterMs: KILL_AFTER_MS,
    labels: (c) => ({ client: String(c) }),
  });
  assert.equal(signal, 'SIGKILL', `server exited on its own (code ${code})`);
  t.diagnostic(
    `${acks.length} acknowledged of ${attempted} attempted; ${inFlightAtKill} in flight at the kill after ${elapsedMs}ms`,
  );
  assert.deepEqual(unexpected, [], 'every answered create was a 201');
  assert.ok(acks.length > 0, 'some creates were acknowledged');
  assert.ok(inFlightAtKill > 0, 'creates were in flight at the kill');
  for (const a of acks) if (BigInt(a.resourceVersion) > maxSeenRV) maxSeenRV = BigInt(a.resourceVersion);
  assert.equal(new Set(acks.map((a) => a.resourceVersion)).size, acks.length, 'acknowledged versions are distinct');

  const second = await startServer([], first.dataDir);
  servers.push(second);
  const ready = await request(second.url, 'GET', '/readyz');
  assert.equal(ready.status, 200);
  const nsBack = await request(second.url, 'GET', `/api/v1/namespaces/${NS}`);
  assert.equal(nsBack.status, 200, 'the namespace survived');

  const list = await request(second.url, 'GET', cms);
  assert.equal(list.status, 200);
  const stored = new Map<string, any>(list.json.items.map((i: any) => [i.metadata.name, i.metadata]));
  assert.ok(stored.size >= acks.length, `${stored.size} stored < ${acks.length} acknowledged`);
  const lost: string[] = [];
  for (const a of acks) {
    const m = stored.get(a.name);
    if (!m) {
      lost.push(a.name);
      continue;
    }
    assert.equal(m.uid, a.uid, `${a.name} uid`);
    assert.equal(m.resourceVersion, a.resourceVersion, `${a.name} resourceVersion`);
  }
  assert.deepEqual(lost, [], `${lost.length} acknowledged creates lost`);
  // individual reads agree with the list (a bounded sample, fetched in batches)
  const sample = acks.filter((_, i) => i % 10 === 0);
  for (let i = 0; i < sample.length; i += 50) {
    await Promise.all(
      sample.slice(i, i + 50).map(async (a) => {
        const g = await request(second.url, 'GET', `${cms}/${a.name}`);
        assert.equal(g.status, 200, a.name);
        assert.equal(g.json.metadata.uid, a.uid);
        assert.equal(g.json.metadata.resourceVersion, a.resourceVersion);
      }),
    );
  }
  for (const i of list.json.items)
    if (BigInt(i.metadata.resourceVersion) > maxSeenRV) maxSeenRV = BigInt(i.metadata.resourceVersion);

  // Versions are opaque to clients; this test alone compares them as integers to check that
  // the counter resumed above everything ever handed out before the crash.
  const fresh = await request(second.url, 'POST', cms, configMap('after-restart'));
  assert.equal(fresh.status, 201);
  assert.ok(
    BigInt(fresh.json.metadata.resourceVersion) > maxSeenRV,
    `new resourceVersion ${fresh.json.metadata.resourceVersion} is not above ${maxSeenRV}`,
  );
  const listAfter = await request(second.url, 'GET', cms);
  assert.ok(BigInt(listAfter.json.metadata.resourceVersion) >= BigInt(fresh.json.metadata.resourceVersion));
  const dup = await request(second.url, 'POST', cms, configMap(acks[0]!.name));
  assert.equal(dup.status, 409, 'an acknowledged name is still taken');
  assert.equal(dup.json.reason, 'AlreadyExists');
});
