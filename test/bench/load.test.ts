/**
 * The load CLI end to end: every scenario for ~1 s at low load against a freshly started
 * server, the report's schema, and its request counts against the server's own
 * apiserver_request_total (delta before/after); a bench-started server; Ctrl-C's partial
 * report; compare.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { request, startServer } from '../helpers/server.js';
import { checkSchema, type Report } from '../../bench/load/report.js';
import { LOAD_SCENARIOS } from '../../bench/load/args.js';
import { delta, requestCounts } from '../../bench/load/metrics.js';

const RUN = resolve(process.cwd(), 'dist/bench/run.js');
const SMALL = [
  '--duration',
  '1s',
  '--concurrency',
  '2',
  '--objects',
  '20',
  '--namespaces',
  '2',
  '--per-namespace',
  '3',
  '--nodes',
  '2',
  '--watchers',
  '4',
  '--write-rate',
  '20',
  '--informers',
  '3',
  '--relist',
  '1',
  '--qps',
  '40',
  '--no-progress',
];

function bench(args: string[], timeoutMs = 90_000): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

const readReport = (dir: string): Report => JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));

async function metrics(url: string): Promise<Map<string, number>> {
  const r = await request(url, 'GET', '/metrics');
  assert.equal(r.status, 200);
  return requestCounts(r.text);
}

test("every scenario: schema, files, and counts equal to the server's apiserver_request_total", async () => {
  const server = await startServer();
  const out = mkdtempSync(join(tmpdir(), 'plat-bench-out-'));
  try {
    const before = await metrics(server.url);
    const r = bench(['all', '--server', server.url, '--server-pid', String(server.proc.pid), '--out', out, ...SMALL]);
    assert.equal(r.status, 0, r.stderr);
    const report = readReport(out);
    assert.equal(checkSchema(report), undefined);
    assert.deepEqual(
      report.scenarios.map((s) => s.name),
      [...LOAD_SCENARIOS],
    );
    for (const s of report.scenarios) {
      assert.equal(s.error, null, `${s.name}: ${s.error}`);
      const measuredOps = s.operations.filter((o) => o.phase !== 'setup');
      assert.ok(
        measuredOps.some((o) => o.requests > 0),
        `${s.name} measured nothing`,
      );
      for (const o of measuredOps)
        if (o.verb !== 'WATCH' && o.verb !== 'PUT')
          assert.equal(o.errors, 0, `${s.name} ${o.key}: ${JSON.stringify(o.errorsByCode)}`);
      assert.ok(s.timeline.length >= 1, `${s.name} has a timeline`);
      assert.equal(s.server.source, 'proc');
      assert.ok(s.client.cpuSeconds > 0 && s.client.cpuCores > 0);
      assert.ok((s.server.rssPeakBytes ?? 0) > 10 * 2 ** 20);
    }
    const fan = report.scenarios.find((s) => s.name === 'watch-fanout')!;
    assert.equal(fan.figures.watchersOpen, 4);
    assert.ok(
      (fan.figures.deliveries ?? 0) > 0 && fan.figures.deliveries === fan.figures.deliveriesExpected,
      JSON.stringify(fan.figures),
    );
    const density = report.scenarios.find((s) => s.name === 'density')!;
    assert.equal(density.operations.find((o) => o.key === 'create POST pods')?.requests, 6);
    assert.equal(density.operations.find((o) => o.key === 'delete DELETE nodes')?.requests, 2);
    assert.ok(density.figures.clusterListPodsP99Ms !== null);
    assert.ok(report.scenarios.find((s) => s.name === 'get')!.ceilings.length === 1);
    // the server's counters: poll (bounded) until the watches the bench closed are counted
    const sent = new Map(report.requestCounts.map((c) => [`${c.verb}|${c.group}|${c.resource}|${c.code}`, c.count]));
    assert.ok(sent.size > 10);
    let seen = new Map<string, number>();
    const until = Date.now() + 10_000;
    for (let i = 0; i < 50 && Date.now() < until; i++) {
      seen = delta(before, await metrics(server.url));
      if (JSON.stringify([...seen].sort()) === JSON.stringify([...sent].sort())) break;
      await new Promise((r2) => setTimeout(r2, 200));
    }
    assert.deepEqual(Object.fromEntries([...seen].sort()), Object.fromEntries([...sent].sort()));
    assert.equal(report.metricsCheck.matched, true, JSON.stringify(report.metricsCheck.differences));
    for (const f of ['report.md', 'latency-over-time.svg', 'throughput.svg', 'latency-cdf.svg'])
      assert.ok(existsSync(join(out, f)), f);
    assert.match(readFileSync(join(out, 'latency-cdf.svg'), 'utf8'), /^<svg [^>]*>[\s\S]*<polyline[\s\S]*<\/svg>\n$/);
    assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /## watch-fanout[\s\S]*deliveryP99Ms/);
    // compare against itself: every figure within the noise band
    const c = bench(['compare', join(out, 'report.json'), join(out, 'report.json')]);
    assert.equal(c.status, 0, c.stderr);
    assert.match(c.stdout, /figures compared: 0 better, 0 worse, (\d+) within noise/);
    assert.doesNotMatch(c.stdout, /\*\*worse\*\*/);
  } finally {
    await server.stop();
    server.cleanup();
    rmSync(out, { recursive: true, force: true });
  }
});

test('without --server the bench starts a fresh server and stops it', () => {
  const out = mkdtempSync(join(tmpdir(), 'plat-bench-out-'));
  try {
    const r = bench(['get', '--out', out, '--no-ceilings', ...SMALL]);
    assert.equal(r.status, 0, r.stderr);
    const report = readReport(out);
    assert.equal(report.target.startedByBench, true);
    assert.equal(report.metricsCheck.matched, true);
    const get = report.scenarios[0]!;
    assert.equal(get.server.source, 'proc');
    assert.ok((get.server.rssPeakBytes ?? 0) > 10 * 2 ** 20);
    assert.equal(get.slo.length, 1);
    assert.equal(get.slo[0]!.class, 'single-object');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('Ctrl-C stops a long run and writes a partial report', async () => {
  const server = await startServer();
  const out = mkdtempSync(join(tmpdir(), 'plat-bench-out-'));
  try {
    const child = spawn(
      process.execPath,
      [
        RUN,
        'get',
        'create',
        '--server',
        server.url,
        '--out',
        out,
        '--duration',
        '60s',
        '--concurrency',
        '2',
        '--no-progress',
        '--no-ceilings',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
    });
    const exited = once(child, 'exit');
    const until = Date.now() + 20_000;
    while (!err.includes('== get') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    // let some requests through, then interrupt: poll the server's counters, not a fixed sleep
    for (let i = 0; i < 200 && Date.now() < until; i++) {
      if ([...(await metrics(server.url))].some(([k, v]) => k.startsWith('GET||configmaps|200') && v >= 50)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const t0 = Date.now();
    child.kill('SIGINT');
    const [code] = await exited;
    assert.ok(Date.now() - t0 < 15_000, 'stopped promptly');
    assert.equal(code, 0, err);
    const report = readReport(out);
    assert.equal(report.interrupted, true);
    assert.deepEqual(
      report.scenarios.map((s) => s.name),
      ['get'],
    );
    assert.ok(report.scenarios[0]!.interrupted);
    assert.ok(report.scenarios[0]!.elapsedSec < 30);
    assert.ok((report.scenarios[0]!.operations.find((o) => o.key === 'GET configmaps')?.requests ?? 0) >= 50);
  } finally {
    await server.stop();
    server.cleanup();
    rmSync(out, { recursive: true, force: true });
  }
});
