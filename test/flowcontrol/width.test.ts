/**
 * API Priority and Fairness work estimates in the real server: a LIST occupies one seat per 100
 * stored objects of its resource (upstream's list work estimator), shown by the level's
 * `apiserver_flowcontrol_current_executing_seats` while the LIST is held in its seats (a LIST
 * that waits for a future resourceVersion; the test releases it by writing, no sleeps).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain, configMap } from '../helpers/server.js';
import { parseMetrics, sampleValue } from '../helpers/metrics.js';
import { until } from '../helpers/poll.js';
import { openWatch, type WatchClient } from '../helpers/watch.js';

const FC = '/apis/flowcontrol.apiserver.plat.io/v1';
const CMS = '/api/v1/namespaces/default/configmaps';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
const asLister = (path: string) =>
  request(s.secureUrl, tls, 'GET', path, undefined, { authorization: 'Bearer lister' });

before(async () => {
  pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), 'lister,lister,u1\n');
  s = await startAuthServer(['--token-auth-file', pki.path('tokens.csv'), '--authorization-mode', 'AlwaysAllow']);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
  await wideLevel();
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

/** The 'wide' priority level and the flow schema putting the lister in it (for every test: each runs alone too). */
async function wideLevel(): Promise<void> {
  const pl = await plain(s.url, 'POST', `${FC}/prioritylevelconfigurations`, {
    metadata: { name: 'wide' },
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 100,
        limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 50 } },
      },
    },
  });
  assert.equal(pl.status, 201, pl.text);
  const fs = await plain(s.url, 'POST', `${FC}/flowschemas`, {
    metadata: { name: 'wide' },
    spec: {
      matchingPrecedence: 50,
      priorityLevelConfiguration: { name: 'wide' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'lister' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  });
  assert.equal(fs.status, 201, fs.text);
  await until(
    async () =>
      (await asLister(`${CMS}/none`)).headers['x-platform-pf-prioritylevel-uid'] === pl.json.metadata.uid
        ? true
        : undefined,
    'lister in the wide level',
  );
}

async function levelMetrics(): Promise<{ seats: number; requests: number; stored: number }> {
  const m = parseMetrics((await plain(s.url, 'GET', '/metrics')).text);
  return {
    seats: sampleValue(m, 'apiserver_flowcontrol_current_executing_seats', { priority_level: 'wide' }),
    requests: sampleValue(m, 'apiserver_flowcontrol_current_executing_requests', { priority_level: 'wide' }),
    stored: sampleValue(m, 'apiserver_storage_objects', { resource: 'configmaps' }),
  };
}

/** Holds `path` (a LIST) in its seats until a write; returns the seats and requests it showed. */
async function heldList(path: string): Promise<{ seats: number; requests: number }> {
  const rv = Number((await plain(s.url, 'GET', CMS)).json.metadata.resourceVersion) + 1;
  const sep = path.includes('?') ? '&' : '?';
  const held = asLister(`${path}${sep}resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
  const shown = await until(async () => {
    const m = await levelMetrics();
    return m.requests === 1 ? { seats: m.seats, requests: m.requests } : undefined;
  }, 'the LIST in its seats');
  assert.equal((await plain(s.url, 'POST', CMS, configMap(`release-${rv}`))).status, 201);
  assert.equal((await held).status, 200);
  await until(async () => ((await levelMetrics()).seats === 0 ? true : undefined), 'the seats free');
  return shown;
}

test('a LIST occupies a seat per 100 stored objects of its resource; a paged one twice its page; a GET one', async () => {
  assert.equal((await plain(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'bulk' } })).status, 201);
  for (let i = 0; i < 250; i += 25) {
    const batch = Array.from({ length: 25 }, (_, j) =>
      plain(s.url, 'POST', '/api/v1/namespaces/bulk/configmaps', configMap(`w-${i + j}`)),
    );
    assert.deepEqual(
      (await Promise.all(batch)).map((r) => r.status).filter((c) => c !== 201),
      [],
    );
  }
  const { stored } = await levelMetrics();
  assert.ok(stored >= 250 && stored < 300, `${stored} ConfigMaps stored`);
  // a LIST of one namespace is estimated from the whole resource, as upstream
  assert.deepEqual(await heldList(CMS), { seats: 3, requests: 1 });
  assert.deepEqual(
    await heldList(`${CMS}?limit=50`),
    { seats: 1, requests: 1 },
    'a page of 50 from storage: 100 objects',
  );
  assert.deepEqual(await heldList(`${CMS}?limit=150`), { seats: 3, requests: 1 });
});

test('a write to a resource with 30 watchers is estimated at 3 seats (a final seat per 10 watchers); with none, 1', async () => {
  const estimated = async () => {
    const m = parseMetrics((await plain(s.url, 'GET', '/metrics')).text);
    const labels = { flow_schema: 'wide', priority_level: 'wide' };
    return {
      sum: sampleValue(m, 'apiserver_flowcontrol_work_estimated_seats_sum', labels),
      count: sampleValue(m, 'apiserver_flowcontrol_work_estimated_seats_count', labels),
    };
  };
  const create = (name: string) =>
    request(s.secureUrl, tls, 'POST', CMS, configMap(name), { authorization: 'Bearer lister' });
  let before = await estimated();
  assert.equal((await create('no-watchers')).status, 201);
  let after = await estimated();
  assert.deepEqual([after.count - before.count, after.sum - before.sum], [1, 1]);
  const watches: WatchClient[] = [];
  try {
    for (let i = 0; i < 30; i++) watches.push(await openWatch(s.url, '/api/v1/configmaps?watch=true'));
    let i = 0;
    // the last watch may register a moment after its headers: write until the estimate shows all 30
    await until(async () => {
      before = await estimated();
      assert.equal((await create(`watched-${i++}`)).status, 201);
      after = await estimated();
      return after.sum - before.sum === 3 ? true : undefined;
    }, 'a write estimated at 3 seats');
    assert.equal(after.count - before.count, 1);
  } finally {
    for (const w of watches) w.close();
  }
});
