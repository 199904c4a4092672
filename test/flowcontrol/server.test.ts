/**
 * API Priority and Fairness in the real server (issue 12 items 2 and 7): the default objects,
 * their Dangling conditions, mandatory objects restored, the response headers, Reject and
 * Queue limit responses with 429 + Retry-After, and fairness between a flooding flow and a
 * well-behaved one. Requests are held in their seats by a GET that waits for a future
 * resourceVersion; the test releases them by writing (no sleeps).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { dealHand, flowHash } from '../../src/flowcontrol/dispatcher.js';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain, configMap } from '../helpers/server.js';

const FC = '/apis/flowcontrol.apiserver.plat.io/v1';
const CMS = '/api/v1/namespaces/default/configmaps';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;
const as = (token: string, method: string, path: string, body?: unknown) =>
  request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${token}` });

before(async () => {
  pki = new Pki();
  writeFileSync(
    pki.path('tokens.csv'),
    [
      'root,root,u0,system:masters',
      'flooder,flooder,u1',
      'queued,queued,u2',
      'noisy,noisy,u3',
      'good,good,u4',
      'alice,alice,u5',
    ].join('\n') + '\n',
  );
  // a server concurrency limit of 6 seats
  s = await startAuthServer([
    '--token-auth-file',
    pki.path('tokens.csv'),
    '--authorization-mode',
    'AlwaysAllow',
    '--max-requests-inflight',
    '4',
    '--max-mutating-requests-inflight',
    '2',
  ]);
  tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function currentRV(): Promise<number> {
  return Number((await plain(s.url, 'GET', CMS)).json.metadata.resourceVersion);
}

/** Writes until the global resourceVersion reaches rv (releases held GETs). */
async function advanceTo(rv: number): Promise<void> {
  for (let i = 0; (await currentRV()) < rv && i < 100; i++)
    await plain(s.url, 'POST', CMS, configMap(`advance-${rv}-${i}`));
}

async function level(name: string, limited: object): Promise<string> {
  const r = await plain(s.url, 'POST', `${FC}/prioritylevelconfigurations`, {
    metadata: { name },
    spec: { type: 'Limited', limited },
  });
  assert.equal(r.status, 201, r.text);
  return r.json.metadata.uid;
}

async function schema(name: string, user: string, levelName: string, distinguisher?: string): Promise<void> {
  const r = await plain(s.url, 'POST', `${FC}/flowschemas`, {
    metadata: { name },
    spec: {
      matchingPrecedence: 50,
      priorityLevelConfiguration: { name: levelName },
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: user } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  });
  assert.equal(r.status, 201, r.text);
}

/** Waits until the user's requests are classified into the level (the configuration is live). */
async function active(token: string, levelUid: string): Promise<void> {
  await until(`${token} in its level`, async () =>
    (await as(token, 'GET', `${CMS}/none`)).headers['x-platform-pf-prioritylevel-uid'] === levelUid ? true : undefined,
  );
}

test('the default configuration: 13 FlowSchemas and 8 priority levels, each FlowSchema not Dangling', async () => {
  const fs = await until('Dangling conditions', async () => {
    const r = await plain(s.url, 'GET', `${FC}/flowschemas`);
    return r.json.items.every((i: any) =>
      i.status?.conditions?.some((c: any) => c.type === 'Dangling' && c.status === 'False'),
    )
      ? r.json.items
      : undefined;
  });
  assert.deepEqual(fs.map((i: any) => i.metadata.name).sort(), [
    'catch-all',
    'endpoint-controller',
    'exempt',
    'global-default',
    'kube-controller-manager',
    'kube-scheduler',
    'kube-system-service-accounts',
    'probes',
    'service-accounts',
    'system-leader-election',
    'system-node-high',
    'system-nodes',
    'workload-leader-election',
  ]);
  const pl = await plain(s.url, 'GET', `${FC}/prioritylevelconfigurations`);
  assert.deepEqual(pl.json.items.map((i: any) => i.metadata.name).sort(), [
    'catch-all',
    'exempt',
    'global-default',
    'leader-election',
    'node-high',
    'system',
    'workload-high',
    'workload-low',
  ]);
  const catchAll = pl.json.items.find((i: any) => i.metadata.name === 'catch-all');
  assert.equal(catchAll.spec.limited.nominalConcurrencyShares, 5);
  assert.equal(catchAll.metadata.annotations['apf.plat.io/autoupdate-spec'], 'true');
});

test('answers name the matched FlowSchema and priority level; masters are exempt', async () => {
  const pls = (await plain(s.url, 'GET', `${FC}/prioritylevelconfigurations`)).json.items;
  const fss = (await plain(s.url, 'GET', `${FC}/flowschemas`)).json.items;
  const uid = (items: any[], name: string) => items.find((i) => i.metadata.name === name).metadata.uid;
  const a = await as('alice', 'GET', CMS);
  assert.equal(a.status, 200);
  assert.equal(a.headers['x-platform-pf-flowschema-uid'], uid(fss, 'global-default'));
  assert.equal(a.headers['x-platform-pf-prioritylevel-uid'], uid(pls, 'global-default'));
  const root = await as('root', 'GET', CMS);
  assert.equal(root.headers['x-platform-pf-flowschema-uid'], uid(fss, 'exempt'));
  const probe = await as('alice', 'GET', '/readyz');
  assert.equal(probe.headers['x-platform-pf-flowschema-uid'], uid(fss, 'probes'));
});

test('a deleted mandatory object comes back; a FlowSchema without its level is Dangling and skipped', async () => {
  assert.equal((await plain(s.url, 'DELETE', `${FC}/prioritylevelconfigurations/catch-all`)).status, 200);
  await until('catch-all restored', async () =>
    (await plain(s.url, 'GET', `${FC}/prioritylevelconfigurations/catch-all`)).status === 200 ? true : undefined,
  );
  await schema('orphan', 'alice', 'no-such-level');
  const cond = await until('Dangling True', async () => {
    const r = await plain(s.url, 'GET', `${FC}/flowschemas/orphan`);
    return r.json.status?.conditions?.find((c: any) => c.type === 'Dangling' && c.status === 'True');
  });
  assert.equal(cond.reason, 'NotFound');
  assert.match(cond.message, /no such object/);
  const a = await as('alice', 'GET', CMS);
  assert.equal(a.status, 200, 'alice falls through to global-default');
  assert.notEqual(
    a.headers['x-platform-pf-flowschema-uid'],
    (await plain(s.url, 'GET', `${FC}/flowschemas/orphan`)).json.metadata.uid,
  );
});

/** The Reject scenario (its own test, and the metrics test when it runs alone). */
async function rejectScenario(): Promise<void> {
  const uid = await level('tiny-reject', {
    nominalConcurrencyShares: 1,
    borrowingLimitPercent: 0,
    limitResponse: { type: 'Reject' },
  });
  await schema('flooder', 'flooder', 'tiny-reject');
  await active('flooder', uid);
  const rv = (await currentRV()) + 3;
  const held = as('flooder', 'GET', `${CMS}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
  const refused = await until('the seat taken', async () => {
    const r = await as('flooder', 'GET', CMS);
    return r.status === 429 ? r : undefined;
  });
  assert.equal(refused.json.reason, 'TooManyRequests');
  assert.equal(refused.headers['retry-after'], '1');
  await advanceTo(rv);
  assert.equal((await held).status, 200);
  assert.equal((await as('flooder', 'GET', CMS)).status, 200, 'the seat is free again');
}

test('Reject: past its seats a level answers 429 TooManyRequests with Retry-After at once', rejectScenario);

/**
 * A create whose body the client sends slowly: it holds its seat from dispatch until `finish`
 * sends the rest of the body. Leading whitespace trickles in every second meanwhile, so the
 * server's idle timeout (which cuts off stalled uploads) does not close it.
 */
function slowCreate(token: string, name: string): { finish(): Promise<number> } {
  const json = JSON.stringify(configMap(name));
  const pad = 120;
  const req = httpsRequest(new URL(CMS, s.secureUrl), {
    method: 'POST',
    ca: tls.ca,
    agent: false,
    servername: 'localhost',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': String(pad + Buffer.byteLength(json)),
    },
  });
  const answered = new Promise<number>((done, fail) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode!));
    });
    req.on('error', fail);
  });
  let sent = 1;
  req.write(' ');
  const trickle = setInterval(() => {
    if (sent < pad - 1) {
      req.write(' ');
      sent++;
    }
  }, 1000);
  return {
    finish: () => {
      clearInterval(trickle);
      req.end(' '.repeat(pad - sent) + json);
      return answered;
    },
  };
}

/** Answers within `ms`, or undefined (the request is still waiting in a queue). */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<undefined>((done) => setTimeout(() => done(undefined), ms).unref())]);

/** The Queue scenario (its own test, and the metrics test when it runs alone). */
async function queueScenario(): Promise<void> {
  const uid = await level('tiny-queue', {
    nominalConcurrencyShares: 1,
    borrowingLimitPercent: 0,
    limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 2 } },
  });
  await schema('queued', 'queued', 'tiny-queue');
  await active('queued', uid);
  const held = slowCreate('queued', 'queued-held');
  // probes that get no answer are waiting in the queue; once it holds two, the next is refused
  const waiting: Promise<{ status: number }>[] = [];
  const full = await until('the queue full', async () => {
    const r = as('queued', 'GET', CMS);
    const answer = await within(r, 300);
    if (answer === undefined) waiting.push(r);
    return answer?.status === 429 ? answer : undefined;
  });
  assert.equal(full.json.reason, 'TooManyRequests');
  assert.equal(full.headers['retry-after'], '1');
  assert.equal(waiting.length, 2, 'two requests waited');
  assert.equal(await held.finish(), 201);
  assert.deepEqual(
    (await Promise.all(waiting)).map((r) => r.status),
    [200, 200],
    'the queued requests ran once the seat freed',
  );
}

test(
  'Queue: requests wait in their queue (served once a seat frees); past queueLengthLimit they are refused',
  queueScenario,
);

test('fairness: a client flooding LISTs does not starve a well-behaved writer in the same priority level', async () => {
  const uid = await level('shared', {
    nominalConcurrencyShares: 1,
    borrowingLimitPercent: 0,
    limitResponse: { type: 'Queue', queuing: { queues: 32, handSize: 1, queueLengthLimit: 60 } },
  });
  await schema('shared-noisy', 'noisy', 'shared', 'ByUser');
  await schema('shared-good', 'good', 'shared', 'ByUser');
  await active('noisy', uid);
  await active('good', uid);
  const queueOf = (fs: string, user: string) => dealHand(flowHash(`${fs}\u0000${user}`), 32, 1)[0];
  assert.notEqual(
    queueOf('shared-noisy', 'noisy'),
    queueOf('shared-good', 'good'),
    'the two flows have their own queues',
  );
  // the flood's connections are opened first, so that it arrives in one burst (uWS closes a
  // request that has not finished within 10 s, and 90 TLS handshakes on a busy machine are slow)
  const agent = new HttpsAgent({ keepAlive: true, maxSockets: 90 });
  const noisy = { ...tls, agent };
  // (warmed as root, who is exempt: 90 of the noisy user's own requests at once could
  // overflow its queue of 60 behind the level's one seat and be refused with 429)
  const warm = await Promise.all(
    Array.from({ length: 90 }, () =>
      request(s.secureUrl, noisy, 'GET', `${CMS}?limit=1`, undefined, { authorization: 'Bearer root' }),
    ),
  );
  assert.deepEqual(
    warm.filter((r) => r.status !== 200).map((r) => r.status),
    [],
  );
  // the noisy client holds the level's one seat (a LIST that gets no answer shows it is taken),
  // then floods: 60 LISTs wait, the rest are refused
  const held = slowCreate('noisy', 'noisy-held');
  const list = () => request(s.secureUrl, noisy, 'GET', CMS, undefined, { authorization: 'Bearer noisy' });
  const { probe: first } = await until('the seat held', async () => {
    const probe = list();
    return (await within(probe, 300)) === undefined ? { probe } : undefined;
  });
  let noisyDone = 0,
    refused = 0;
  const flood = [first, ...Array.from({ length: 89 }, list)].map((p) =>
    p.then((r) => {
      noisyDone++;
      if (r.status === 429) refused++;
      return r.status;
    }),
  );
  await until('the noisy queue full', async () => (refused >= 30 ? true : undefined), 8_000);
  // the controller has ten writes waiting (on open connections) when the seat frees
  const goodAgent = new HttpsAgent({ keepAlive: true, maxSockets: 10 });
  const good = { ...tls, agent: goodAgent };
  await Promise.all(
    Array.from({ length: 10 }, () =>
      request(s.secureUrl, good, 'GET', '/version', undefined, { authorization: 'Bearer good' }),
    ),
  );
  const servedBefore = noisyDone - refused;
  let released = 0;
  const latencies: number[] = [];
  const writes = Array.from({ length: 10 }, (_, i) =>
    request(s.secureUrl, good, 'POST', CMS, configMap(`good-${i}`), { authorization: 'Bearer good' }).then((r) => {
      latencies.push(Date.now() - released);
      return r;
    }),
  );
  assert.equal(await within(Promise.race(writes), 300), undefined, 'the writes wait for the seat');
  released = Date.now();
  assert.equal(await held.finish(), 201);
  for (const r of await Promise.all(writes)) assert.equal(r.status, 201, r.text);
  const servedDuring = noisyDone - refused - servedBefore;
  const codes = await Promise.all(flood);
  assert.deepEqual([...new Set(codes)].sort(), [200, 429]);
  assert.equal(codes.filter((c) => c === 200).length, 60);
  // round robin between the two queues: about one LIST per write, far from the 60 queued
  assert.ok(servedDuring <= 15, `${servedDuring} of 60 queued LISTs ran before the controller's 10 writes were done`);
  agent.destroy();
  goodAgent.destroy();
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    `# fairness: the controller's 10 writes done ${latencies[9]} ms after the seat freed; ${servedDuring} of 60 queued LISTs ran meanwhile\n`,
  );
});

test('apiserver_flowcontrol_* metrics count dispatches and rejections per flow schema and priority level', async () => {
  // the traffic counted below is the Reject and Queue scenarios': run here when this test runs alone
  const has = async (name: string) =>
    (await plain(s.url, 'GET', `${FC}/prioritylevelconfigurations/${name}`)).status === 200;
  if (!(await has('tiny-reject'))) await rejectScenario();
  if (!(await has('tiny-queue'))) await queueScenario();
  assert.equal((await as('alice', 'GET', CMS)).status, 200, "alice's request in global-default");
  const m = await plain(s.url, 'GET', '/metrics');
  assert.equal(m.status, 200);
  const line = (re: RegExp) => m.text.split('\n').find((l) => re.test(l));
  const dispatched = line(
    /^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="global-default",priority_level="global-default"\} \d+/,
  );
  assert.ok(
    dispatched && Number(dispatched.split(' ').pop()) > 0,
    "alice's requests were dispatched in global-default",
  );
  const rejected = line(
    /^apiserver_flowcontrol_rejected_requests_total\{flow_schema="flooder",priority_level="tiny-reject",reason="concurrency-limit"\} \d+/,
  );
  assert.ok(rejected && Number(rejected.split(' ').pop()) >= 1, 'the Reject level counted its refusal');
  assert.ok(
    line(
      /^apiserver_flowcontrol_rejected_requests_total\{flow_schema="queued",priority_level="tiny-queue",reason="queue-full"\} \d+/,
    ),
    'queue-full counted',
  );
  assert.ok(line(/^apiserver_flowcontrol_nominal_limit_seats\{priority_level="catch-all"\} \d+/));
  assert.ok(
    line(/^apiserver_flowcontrol_current_executing_requests\{flow_schema="exempt",priority_level="exempt"\} \d+/),
  );
  assert.ok(
    line(/^apiserver_flowcontrol_current_inqueue_requests\{flow_schema="queued",priority_level="tiny-queue"\} 0$/),
    'nothing left waiting',
  );
  // the Queue test's two waiters: queue lengths 1 and 2 after enqueue; its requests waited (execute
  // true) and the refused ones are counted with execute false
  assert.ok(
    line(
      /^apiserver_flowcontrol_request_queue_length_after_enqueue_count\{flow_schema="queued",priority_level="tiny-queue"\} [1-9]/,
    ),
  );
  assert.ok(
    line(
      /^apiserver_flowcontrol_request_queue_length_after_enqueue_bucket\{flow_schema="queued",priority_level="tiny-queue",le="0"\} 0$/,
    ),
    'a queued request sees itself in the queue',
  );
  const waited = line(
    /^apiserver_flowcontrol_request_wait_duration_seconds_count\{execute="true",flow_schema="queued",priority_level="tiny-queue"\} \d+/,
  );
  assert.ok(waited && Number(waited.split(' ').pop()) >= 3, 'the held request and the two that waited');
  const waitSum = line(
    /^apiserver_flowcontrol_request_wait_duration_seconds_sum\{execute="true",flow_schema="queued",priority_level="tiny-queue"\} /,
  );
  assert.ok(waitSum && Number(waitSum.split(' ').pop()) > 0, 'time spent waiting is recorded');
  assert.ok(
    line(
      /^apiserver_flowcontrol_request_wait_duration_seconds_count\{execute="false",flow_schema="flooder",priority_level="tiny-reject"\} [1-9]/,
    ),
    'rejections are observed with execute="false"',
  );
});
