/**
 * End to end on etcd: the real server process with `--storage-backend etcd3` against a real
 * etcd: CRUD, a restart on the same etcd with a new empty data dir, SIGKILL during a stream of
 * creates, watch, TLS, and an unreachable etcd. Each test uses its own --etcd-prefix.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { startServer, request, configMap, type TestServer } from '../../helpers/server.js';
import { openWatch, type WatchClient } from '../../helpers/watch.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { createUntilKilled, type Ack } from '../../helpers/kill-stream.js';
import { parseArgs, DEFAULT_OPTIONS } from '../../../src/server/options.js';

let etcd: TestEtcd;
const servers: TestServer[] = [];
const watches: WatchClient[] = [];

before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  for (const w of watches) w.close();
  for (const s of servers) {
    await s.stop('SIGKILL');
    s.cleanup();
  }
  await etcd?.cleanup();
});

async function serve(prefix: string): Promise<TestServer> {
  const s = await startServer(['--storage-backend', 'etcd3', '--etcd-servers', etcd.url, '--etcd-prefix', prefix]);
  servers.push(s);
  return s;
}

async function namespace(url: string, name: string): Promise<void> {
  const r = await request(url, 'POST', '/api/v1/namespaces', { metadata: { name } });
  assert.equal(r.status, 201, r.text);
}

/** Every acknowledged object is listed with the same uid and resourceVersion. */
async function assertAllPresent(url: string, path: string, acks: Ack[]): Promise<void> {
  const list = await request(url, 'GET', path);
  assert.equal(list.status, 200);
  const stored = new Map<string, any>(list.json.items.map((i: any) => [i.metadata.name, i.metadata]));
  const lost = acks.filter((a) => !stored.has(a.name)).map((a) => a.name);
  assert.deepEqual(lost, [], `${lost.length} acknowledged objects lost`);
  for (const a of acks) {
    assert.equal(stored.get(a.name).uid, a.uid, `${a.name} uid`);
    assert.equal(stored.get(a.name).resourceVersion, a.resourceVersion, `${a.name} resourceVersion`);
  }
}

test('ConfigMap CRUD on etcd, and every object back after a restart with an empty data dir', async () => {
  const s = await serve('/e2e-crud');
  await namespace(s.url, 'crud');
  const cms = '/api/v1/namespaces/crud/configmaps';
  const acks: Ack[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await request(s.url, 'POST', cms, configMap(`cm-${i}`, { i: String(i) }, { k: `v${i}`, u: 'grüße 🙂' }));
    assert.equal(r.status, 201, r.text);
    acks.push({ name: `cm-${i}`, uid: r.json.metadata.uid, resourceVersion: r.json.metadata.resourceVersion });
  }
  const got = await request(s.url, 'GET', `${cms}/cm-3`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json.data, { k: 'v3', u: 'grüße 🙂' });

  const upd = await request(s.url, 'PUT', `${cms}/cm-3`, { ...got.json, data: { k: 'changed' } });
  assert.equal(upd.status, 200, upd.text);
  assert.notEqual(upd.json.metadata.resourceVersion, got.json.metadata.resourceVersion);
  acks[3] = { name: 'cm-3', uid: upd.json.metadata.uid, resourceVersion: upd.json.metadata.resourceVersion };
  const del = await request(s.url, 'DELETE', `${cms}/cm-7`);
  assert.equal(del.status, 200, del.text);
  acks.splice(7, 1);

  const list = await request(s.url, 'GET', `${cms}?labelSelector=i%3D3`);
  assert.deepEqual(
    list.json.items.map((i: any) => i.data.k),
    ['changed'],
  );

  await s.stop();
  const again = await serve('/e2e-crud');
  assert.notEqual(again.dataDir, s.dataDir);
  // the data dir holds the identity file and the generated keys (pki/), never an object
  assert.deepEqual(
    readdirSync(again.dataDir).filter((n) => n !== 'pki' && n !== 'platform.json'),
    [],
    'no object is stored in the data dir on etcd',
  );
  await assertAllPresent(again.url, cms, acks);
  assert.equal((await request(again.url, 'GET', `${cms}/cm-7`)).status, 404, 'the delete survived');
  assert.equal((await request(again.url, 'GET', `${cms}/cm-3`)).json.data.k, 'changed', 'the update survived');
  const fresh = await request(again.url, 'POST', cms, configMap('after-restart'));
  assert.equal(fresh.status, 201);
  const maxAck = acks.reduce((m, a) => (BigInt(a.resourceVersion) > m ? BigInt(a.resourceVersion) : m), 0n);
  assert.ok(BigInt(fresh.json.metadata.resourceVersion) > maxAck, 'versions resume above every stored one');
});

test('every acknowledged create survives SIGKILL of the server during a stream of creates', async (t) => {
  const first = await serve('/e2e-kill');
  await namespace(first.url, 'durable');
  const cms = '/api/v1/namespaces/durable/configmaps';
  const { acks, unexpected, inFlightAtKill, signal, elapsedMs } = await createUntilKilled(first, cms, {
    clients: 32,
    maxCreates: 32_000,
    maxMs: 5000,
    killAfterAcks: 500,
    killAfterMs: 1500,
  });
  assert.equal(signal, 'SIGKILL');
  t.diagnostic(`${acks.length} acknowledged; ${inFlightAtKill} in flight at the kill after ${elapsedMs} ms`);
  assert.deepEqual(unexpected, []);
  assert.ok(acks.length > 0 && inFlightAtKill > 0, 'creates were acknowledged and in flight at the kill');

  const second = await serve('/e2e-kill');
  await assertAllPresent(second.url, cms, acks);
  const dup = await request(second.url, 'POST', cms, configMap(acks[0]!.name));
  assert.equal(dup.status, 409, 'an acknowledged name is still taken');
});

test('watch on etcd delivers a create made after the watch started, also after a restart', async () => {
  for (const round of [0, 1]) {
    const s = await serve('/e2e-watch');
    if (round === 0) await namespace(s.url, 'w');
    const cms = '/api/v1/namespaces/w/configmaps';
    const list = await request(s.url, 'GET', cms);
    const w = await openWatch(s.url, `${cms}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    watches.push(w);
    assert.equal(w.status, 200);
    const created = await request(s.url, 'POST', cms, configMap(`watched-${round}`));
    assert.equal(created.status, 201);
    const evs = await w.waitEvents(1);
    assert.equal(evs[0]!.type, 'ADDED');
    assert.equal(evs[0]!.object.metadata.name, `watched-${round}`);
    assert.equal(evs[0]!.object.metadata.resourceVersion, created.json.metadata.resourceVersion);
    w.close();
    await s.stop();
  }
});

test('the server talks to etcd over TLS with --etcd-cafile, --etcd-certfile and --etcd-keyfile', async () => {
  const secure = await startEtcd({ tls: true });
  try {
    const tls = secure.tls!;
    const s = await startServer([
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      secure.url,
      '--etcd-prefix',
      '/e2e-tls',
      '--etcd-cafile',
      tls.caFile,
      '--etcd-certfile',
      tls.certFile,
      '--etcd-keyfile',
      tls.keyFile,
    ]);
    servers.push(s);
    const r = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('over-tls'));
    assert.equal(r.status, 201, r.text);
    await s.stop();
    const again = await startServer([
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      secure.url,
      '--etcd-prefix',
      '/e2e-tls',
      '--etcd-cafile',
      tls.caFile,
      '--etcd-certfile',
      tls.certFile,
      '--etcd-keyfile',
      tls.keyFile,
    ]);
    servers.push(again);
    const got = await request(again.url, 'GET', '/api/v1/namespaces/default/configmaps/over-tls');
    assert.equal(got.status, 200);
    assert.equal(got.json.metadata.uid, r.json.metadata.uid);
    await again.stop();
  } finally {
    await secure.cleanup();
  }
});

test('the server exits with an error at start when etcd cannot be reached', async () => {
  await assert.rejects(
    startServer(['--storage-backend', 'etcd3', '--etcd-servers', 'http://127.0.0.1:1']),
    /server exited with 1: error: .*cannot read from etcd at http:\/\/127\.0\.0\.1:1: .*UNAVAILABLE/,
  );
});

test('etcd flags: defaults, parsing and exact messages', () => {
  assert.equal(DEFAULT_OPTIONS.storageBackend, 'lmdb');
  assert.deepEqual(DEFAULT_OPTIONS.etcdServers, ['http://127.0.0.1:2379']);
  assert.equal(DEFAULT_OPTIONS.etcdPrefix, '/registry');
  assert.equal(DEFAULT_OPTIONS.etcdCompactionIntervalMs, 300_000);
  const o = parseArgs([
    '--storage-backend=etcd3',
    '--etcd-servers',
    'https://10.0.0.1:2379,https://10.0.0.2:2379',
    '--etcd-prefix',
    '/x/',
    '--etcd-cafile',
    'ca',
    '--etcd-certfile',
    'c',
    '--etcd-keyfile',
    'k',
    '--etcd-compaction-interval',
    '1m30s',
  ]);
  assert.deepEqual(
    [
      o.storageBackend,
      o.etcdServers,
      o.etcdPrefix,
      o.etcdCaFile,
      o.etcdCertFile,
      o.etcdKeyFile,
      o.etcdCompactionIntervalMs,
    ],
    ['etcd3', ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'], '/x', 'ca', 'c', 'k', 90_000],
  );
  const bad: [string[], string][] = [
    [['--storage-backend', 'etcd2'], '--storage-backend must be lmdb or etcd3, got "etcd2"'],
    [
      ['--etcd-servers', '127.0.0.1:2379'],
      '--etcd-servers must be a comma-separated list of http:// or https:// URLs, got "127.0.0.1:2379"',
    ],
    [['--etcd-prefix', 'registry'], '--etcd-prefix must start with /, got "registry"'],
    [['--etcd-compaction-interval', '5x'], '--etcd-compaction-interval must be a duration such as 30s or 5m, got "5x"'],
    [['--etcd-certfile', 'c'], '--etcd-certfile and --etcd-keyfile must be given together'],
    [['--etcd-cafile', 'ca'], '--etcd-servers must use https:// when --etcd-cafile or --etcd-certfile is given'],
  ];
  for (const [args, message] of bad) assert.throws(() => parseArgs(args), { message });
});

test('leader election flags: defaults, parsing and exact messages', () => {
  assert.equal(DEFAULT_OPTIONS.leaderElect, undefined, 'unset: on with etcd3, off with lmdb');
  assert.deepEqual(
    [
      DEFAULT_OPTIONS.leaderElectLeaseDurationMs,
      DEFAULT_OPTIONS.leaderElectRenewDeadlineMs,
      DEFAULT_OPTIONS.leaderElectRetryPeriodMs,
    ],
    [15_000, 10_000, 2_000],
  );
  assert.equal(parseArgs(['--leader-elect']).leaderElect, true);
  assert.equal(parseArgs(['--leader-elect=false']).leaderElect, false);
  const o = parseArgs([
    '--leader-elect-lease-duration',
    '30s',
    '--leader-elect-renew-deadline',
    '20s',
    '--leader-elect-retry-period',
    '500ms',
  ]);
  assert.deepEqual(
    [o.leaderElectLeaseDurationMs, o.leaderElectRenewDeadlineMs, o.leaderElectRetryPeriodMs],
    [30_000, 20_000, 500],
  );
  const bad: [string[], string][] = [
    [['--leader-elect=yes'], '--leader-elect must be true or false, got "yes"'],
    [['--leader-elect-lease-duration', '10s'], 'leaseDuration must be greater than renewDeadline'],
    [['--leader-elect-retry-period', '10s'], 'renewDeadline must be greater than retryPeriod'],
  ];
  for (const [args, message] of bad) assert.throws(() => parseArgs(args), { message });
});

test('Event leases live in etcd too: an Event written before a restart expires at its stored time', async () => {
  const args = (ttl: string) => [
    '--storage-backend',
    'etcd3',
    '--etcd-servers',
    etcd.url,
    '--etcd-prefix',
    '/e2e-ttl',
    '--event-ttl',
    ttl,
  ];
  const first = await startServer(args('2s'));
  servers.push(first);
  const t0 = Date.now();
  const c = await request(first.url, 'POST', '/api/v1/namespaces/default/events', {
    metadata: { name: 'leased' },
    involvedObject: { kind: 'Pod', name: 'p' },
    reason: 'R',
  });
  assert.equal(c.status, 201, c.text);
  await first.stop();
  const second = await startServer(args('1h'));
  servers.push(second);
  const end = Date.now() + 15_000;
  let gone = 0;
  while (!gone && Date.now() < end) {
    if ((await request(second.url, 'GET', '/api/v1/namespaces/default/events/leased')).status === 404)
      gone = Date.now();
    else await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(gone, 'the Event expired after the restart');
  assert.ok(gone - t0 >= 1900, `expired ${gone - t0} ms after its write`);
});
