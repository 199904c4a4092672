/**
 * Fairness under noise (issue 12): a well-behaved controller starts one ConfigMap update every
 * 20 ms (open loop: PUTs overlap when answers are slow, at most 32 outstanding) while a noisy client floods LISTs of 2,000 ~1 KB ConfigMaps
 * with wrk over `--connections` connections. Both are ordinary authenticated users (static
 * tokens over HTTPS; the plain port's user is exempt from APF), so API Priority and Fairness puts
 * them in the same priority level (global-default) as two flows. Reported per server config:
 * the controller's p50/p99 alone and during the flood (ratio = flood p99 ÷ alone p99), the
 * noisy client's LIST rate and its 429s. Configs: APF with the default limits, APF with a small
 * server concurrency (15 seats: global-default gets 2, so the flood queues), and APF off
 * (`--enable-priority-and-fairness=false`: only the max-inflight limits).
 */
import { Agent, request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configMapJson, ensureNamespace, expect, parallel } from '../lib/http.js';
import { freePort, sleep, startServer } from '../lib/procs.js';
import type { Row, ScenarioResult } from '../lib/report.js';
import { percentile } from '../lib/stats.js';
import { runWrk, type WrkResult } from '../lib/wrk.js';
import type { Ctx } from './common.js';

const NOISY_NS = 'bench-noisy';
const CTL_NS = 'bench-ctl';
const OBJECTS = 2000;
const WRITE_EVERY_MS = 20;
const MAX_OUTSTANDING = 32;
const CONFIGS: { name: string; args: string[] }[] = [
  { name: 'APF, default limits (400 + 200)', args: [] },
  { name: 'APF, 10 + 5 seats', args: ['--max-requests-inflight', '10', '--max-mutating-requests-inflight', '5'] },
  { name: 'APF off (max-inflight only)', args: ['--enable-priority-and-fairness=false'] },
];

interface Writes {
  latencies: number[];
  failures: number;
}

/** One PUT of the controller's ConfigMap; resolves with the HTTP status. */
function put(agent: Agent, port: number, token: string, i: number): Promise<number> {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ctl' },
    data: { seq: String(i) },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `/api/v1/namespaces/${CTL_NS}/configmaps/ctl`,
        agent,
        rejectUnauthorized: false,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('controller write timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Open-loop writes: one PUT starts every WRITE_EVERY_MS for `ms` whether or not the earlier ones
 * have answered (a controller's workers), at most MAX_OUTSTANDING at once (a write that would
 * exceed it counts as failed); latency runs from each write's start to its answer.
 */
async function controller(port: number, token: string, ms: number): Promise<Writes> {
  const agent = new Agent({ keepAlive: true, maxSockets: MAX_OUTSTANDING });
  const out: Writes = { latencies: [], failures: 0 };
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  try {
    for (let i = 0; ; i++) {
      const due = start + i * WRITE_EVERY_MS;
      if (due - start >= ms) break;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (inFlight.size >= MAX_OUTSTANDING) {
        out.failures++;
        continue;
      }
      const sent = performance.now();
      const p: Promise<void> = put(agent, port, token, i)
        .then(
          (status) => {
            if (status === 200) out.latencies.push(performance.now() - sent);
            else out.failures++;
          },
          () => {
            out.failures++;
          },
        )
        .finally(() => {
          inFlight.delete(p);
        });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  return out;
}

export async function fairnessScenario(ctx: Ctx): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-fair-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(
    tokens,
    'noisy-token-0123456789,noisy,uid-noisy\ncontroller-token-0123456789,controller,uid-controller\n',
  );
  const rows: Row[] = [];
  const commands: string[] = [];
  const measured: string[] = [];
  const ms = ctx.durationSec * 1000;
  try {
    for (const cfg of CONFIGS) {
      const port = await freePort();
      const server = await startServer(ctx.serverNodeArgs, [
        '--secure-port',
        String(port),
        '--token-auth-file',
        tokens,
        '--authorization-mode',
        'AlwaysAllow',
        ...cfg.args,
      ]);
      try {
        await ensureNamespace(server.url, NOISY_NS);
        await ensureNamespace(server.url, CTL_NS);
        await parallel(OBJECTS, 32, async (i) => {
          await expect(
            server.url,
            'POST',
            `/api/v1/namespaces/${NOISY_NS}/configmaps`,
            configMapJson(`cm-${i}`, 900),
            [201],
          );
        });
        await expect(
          server.url,
          'POST',
          `/api/v1/namespaces/${CTL_NS}/configmaps`,
          JSON.stringify({ metadata: { name: 'ctl' }, data: { seq: '-1' } }),
          [201],
        );
        const alone = await controller(port, 'controller-token-0123456789', ms);
        const flood = runWrk({
          url: `https://127.0.0.1:${port}/api/v1/namespaces/${NOISY_NS}/configmaps`,
          threads: 1,
          connections: ctx.connections,
          durationSec: ctx.durationSec + 2,
          timeoutSec: 30,
          headers: ['Authorization: Bearer noisy-token-0123456789'],
        });
        await sleep(1000); // the flood is under way before the controller starts
        const during = await controller(port, 'controller-token-0123456789', ms);
        const noisy: WrkResult = await flood;
        const p = (w: Writes, q: number) => percentile(w.latencies, q);
        const ratio = p(during, 99) / p(alone, 99);
        rows.push(
          {
            scenario: `fairness: ${cfg.name}`,
            subject: 'controller PUT every 20 ms, alone',
            throughput: alone.latencies.length / ctx.durationSec,
            unit: 'writes/s',
            p50Ms: p(alone, 50),
            p99Ms: p(alone, 99),
            errors: alone.failures,
          },
          {
            scenario: `fairness: ${cfg.name}`,
            subject: `controller PUT every 20 ms, during the LIST flood`,
            throughput: during.latencies.length / ctx.durationSec,
            unit: 'writes/s',
            p50Ms: p(during, 50),
            p99Ms: p(during, 99),
            ratio,
            errors: during.failures,
          },
          {
            scenario: `fairness: ${cfg.name}`,
            subject: `noisy LIST flood (${ctx.connections} connections, ${OBJECTS} ConfigMaps)`,
            throughput: noisy.reqPerSec,
            unit: 'req/s',
            p50Ms: noisy.p50Ms,
            p99Ms: noisy.p99Ms,
            errors: noisy.errors,
          },
        );
        measured.push(
          `${cfg.name}: controller p99 ${p(during, 99).toFixed(1)} ms during the flood vs ${p(alone, 99).toFixed(1)} ms alone (${ratio.toFixed(1)}x), ${during.failures} failed writes; flood ${noisy.reqPerSec.toFixed(0)} LIST/s, ${noisy.errors} non-2xx`,
        );
        commands.push(
          `# fairness (${cfg.name}): server flags ${cfg.args.join(' ') || '(defaults)'} --token-auth-file --authorization-mode AlwaysAllow; controller in the bench process`,
          noisy.command,
        );
        ctx.log(`  ${measured[measured.length - 1]}`);
      } finally {
        await server.stop();
        server.cleanup();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    name: 'fairness',
    rows,
    verdicts: [
      {
        target: "a noisy LIST flood cannot starve a well-behaved controller's writes (record its p99)",
        measured: measured.join('; '),
        met: rows.every((r) => !r.subject.startsWith('controller') || (r.errors ?? 0) === 0),
      },
    ],
    commands,
    notes: [
      "ratio column: the controller's p99 during the flood ÷ its p99 alone on the same server",
      "the noisy client's errors are its non-2xx answers (429 when APF rejects)",
    ],
  };
}
