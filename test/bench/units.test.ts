/** Pieces of the load CLI: histogram, protobuf continue reader, flags, compare, the open loop. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hdr, bucketOf, upperOf, BUCKETS } from '../../bench/load/hdr.js';
import { protobufContinue } from '../../bench/load/scenarios/protobuf.js';
import { compareReports, wobblePct } from '../../bench/load/compare.js';
import { parseLoadArgs, isLoadInvocation } from '../../bench/load/args.js';
import { closedLoop, openLoop, sleep } from '../../bench/load/engine.js';
import { sentOf } from '../../bench/load/watch-worker.js';

test('buckets are monotonic and within 1/64 of the value', () => {
  let last = -1;
  for (const us of [0, 1, 127, 128, 129, 1000, 65_432, 1e6, 3.7e7, 4e9, 6e10]) {
    const b = bucketOf(us);
    assert.ok(b >= last && b < BUCKETS, `${us}`);
    last = b;
    const up = upperOf(b);
    assert.ok(up >= Math.floor(us) && up <= Math.floor(us) * (1 + 1 / 64) + 1, `${us} → ${up}`);
  }
});

test('percentiles of a known distribution, merge and sparse round trip', () => {
  const h = new Hdr();
  for (let i = 1; i <= 10_000; i++) h.recordMs(i / 100); // 0.01 .. 100 ms
  assert.ok(Math.abs(h.percentileMs(50) - 50) / 50 < 0.02, `${h.percentileMs(50)}`);
  assert.ok(Math.abs(h.percentileMs(99) - 99) / 99 < 0.02);
  assert.equal(h.percentileMs(100), 100);
  const g = Hdr.fromSparse(h.sparse());
  assert.equal(g.count, 10_000);
  assert.ok(Math.abs(g.percentileMs(90) - h.percentileMs(90)) < 0.01);
  g.merge(h);
  assert.equal(g.count, 20_000);
  assert.ok(Number.isNaN(new Hdr().percentileMs(50)));
});

test('protobufContinue reads ListMeta.continue and tolerates junk', () => {
  const tok = 'eyJydiI6MX0';
  const meta = Buffer.concat([Buffer.from([0x12, 1, 0x35]), Buffer.from([0x1a, tok.length]), Buffer.from(tok)]);
  const list = Buffer.concat([Buffer.from([0x0a, meta.length]), meta]);
  const unknown = Buffer.concat([Buffer.from([0x0a, 0]), Buffer.from([0x12, list.length]), list]);
  assert.equal(protobufContinue(Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown])), tok);
  assert.equal(protobufContinue(Buffer.from('{"json":true}')), '');
  assert.equal(protobufContinue(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x12, 0xff])])), '');
});

test('argument parsing selects the load CLI and bounds its flags', () => {
  assert.equal(isLoadInvocation(['get', '--duration', '5s']), false);
  assert.equal(isLoadInvocation(['get', '--out', 'x']), true);
  assert.equal(isLoadInvocation(['density']), true);
  const a = parseLoadArgs(['mixed', '--server=https://127.0.0.1:6443', '--duration', '1m', '--qps', '300']);
  assert.deepEqual(
    [a.scenarios, a.server, a.opts.durationSec, a.opts.qps],
    [['mixed'], 'https://127.0.0.1:6443', 60, 300],
  );
  assert.throws(() => parseLoadArgs(['get', '--concurrency', '0']), /--concurrency/);
  assert.throws(() => parseLoadArgs(['nope', '--out', 'x']), /unknown scenario/);
  assert.throws(() => parseLoadArgs(['get', '--duration', 'forever']), /--duration/);
  assert.deepEqual(parseLoadArgs(['mixed', '--mix', 'get=3,delete=1']).opts.mix, [
    ['get', 3],
    ['delete', 1],
  ]);
  assert.throws(() => parseLoadArgs(['mixed', '--mix', 'watch=3']), /--mix/);
});

test('compare marks changes outside the noise band by direction', () => {
  const rep = (rps: number, p99: number): any => ({
    scenarios: [
      {
        name: 'get',
        figures: {},
        ceilings: [],
        operations: [
          {
            key: 'GET configmaps',
            verb: 'GET',
            phase: 'measure',
            throughputPerSec: rps,
            errors: 0,
            latencyMs: { p50: 1, p99 },
          },
        ],
      },
    ],
  });
  const c = compareReports(rep(1000, 10), rep(1050, 20), 10);
  const by = Object.fromEntries(c.map((x) => [x.figure, x.verdict]));
  assert.equal(by['get GET configmaps req/s'], 'within noise');
  assert.equal(by['get GET configmaps p99 ms'], 'worse');
  assert.equal(compareReports(rep(1000, 10), rep(2000, 5), 10).filter((x) => x.verdict === 'better').length, 2);
  // a run whose per-second throughput wobbles ±50 % widens the band past a 60 % change
  const wobbly = rep(1000, 10);
  wobbly.scenarios[0].timeline = [0, 500, 1500, 500, 1500, 500, 0].map((requests, tSec) => ({ tSec, requests }));
  assert.ok(wobblePct(wobbly.scenarios[0].timeline) > 50);
  const w = compareReports(wobbly, rep(1600, 10), 10).find((x) => x.figure === 'get GET configmaps req/s')!;
  assert.equal(w.verdict, 'within noise');
  assert.ok(w.bandPct > 100);
});

test('open loop: a stalled server shows as latency counted from the schedule (no coordinated omission)', async () => {
  const latencies: number[] = [];
  // one request in flight at a time, each taking 20 ms, due every 5 ms: the queue grows
  const r = await openLoop({
    qps: 200,
    maxRequests: 20,
    maxInFlight: 1,
    signal: new AbortController().signal,
    step: async (_i, due) => {
      await sleep(20);
      latencies.push(performance.now() - due);
    },
  });
  assert.equal(r.sent, 20);
  assert.equal(latencies.length, 20);
  // a closed loop would report ~20 ms each; from the schedule, the last one waited for the 19 before it
  assert.ok(latencies[19]! > 19 * 20 - 19 * 5 - 5, `${latencies[19]}`);
  assert.ok(r.lagMs > 200);
});

test('loops stop at their count bound and at the signal', async () => {
  let n = 0;
  assert.equal(
    await closedLoop({
      concurrency: 3,
      maxRequests: 10,
      signal: new AbortController().signal,
      step: async () => {
        n++;
      },
    }),
    10,
  );
  assert.equal(n, 10);
  // the signal fires from inside the 21st step: no step starts after it (counts, not a clock)
  const c = new AbortController();
  const sent = await closedLoop({
    concurrency: 2,
    maxRequests: 1e9,
    signal: c.signal,
    step: async (_w, i) => {
      if (i === 20) c.abort();
      await sleep(1);
    },
  });
  assert.equal(sent, 21);
  const o2 = new AbortController();
  let inFlight = 0;
  let mostInFlight = 0;
  const o = await openLoop({
    qps: 1e6,
    maxRequests: 1e9,
    maxInFlight: 10,
    signal: o2.signal,
    step: async (i) => {
      if (i === 40) o2.abort();
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      await sleep(1);
      inFlight--;
    },
  });
  assert.equal(o.sent, 41);
  assert.equal(mostInFlight, 10);
  assert.equal(inFlight, 0);
});

test('sentOf reads the send stamp of MODIFIED lines only, the first one with its leading space', () => {
  const key = '"bench.plat.io/sent":"';
  const line = (type: string, v = '1700000000123.456') =>
    `{"type":"${type}","object":{"metadata":{"annotations":{"bench.plat.io/sent":"${v}"}}}}`;
  assert.equal(sentOf(line('MODIFIED'), key), 1700000000123.456);
  assert.equal(sentOf(' ' + line('MODIFIED'), key), 1700000000123.456);
  assert.equal(sentOf(line('ADDED'), key), undefined);
  assert.equal(sentOf(line('MODIFIED', 'x'), key), undefined);
  assert.equal(sentOf('{"type":"MODIFIED","object":{}}', key), undefined);
});
