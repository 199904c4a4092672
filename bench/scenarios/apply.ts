/**
 * Server-side apply of a 3-container Deployment over HTTP, repeated with changes by two field
 * managers: each of N concurrent clients owns one Deployment and alternates a `deployer`
 * apply (the whole intent minus replicas: new image tags and an env value each time, no
 * force) with an `autoscaler` apply of spec.replicas only (force=true, as a controller
 * should). Every apply changes the object and none conflicts; a non-200 counts as an error.
 * Bounded by time (--duration after a 2 s warm-up) and by count. The ceiling is the
 * hello-world server answering the same PATCHes from the same client, with a body of the
 * applied object's size: what this client can drive at most.
 */
import http from 'node:http';
import { cpuSeconds, startHello, startServer, type Child } from '../lib/procs.js';
import { ensureNamespace } from '../lib/http.js';
import { Histogram } from '../lib/stats.js';
import type { ScenarioResult } from '../lib/report.js';
import { bestOf, runTag, WARMUP_SEC, type Ctx } from './common.js';

const NS = 'bench-apply';
const PATH = `/apis/apps/v1/namespaces/${NS}/deployments`;
const CONTENT_TYPE = 'application/apply-patch+yaml';
const MAX_APPLIES = 2_000_000;
const TIMEOUT_MS = 30_000;
const TARGET = 5000;

/** The deployer's intent at round k: three containers whose images and env change every time. */
export function deployerBody(name: string, k: number): string {
  const containers = ['web', 'sidecar', 'metrics'].map((c, i) => ({
    name: c,
    image: `registry.example/${c}:1.${k}.${i}`,
    ports: [{ name: `p${i}`, containerPort: 8080 + i }],
    env: [
      { name: 'ROUND', value: String(k) },
      { name: 'ROLE', value: c },
    ],
    resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
  }));
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers } },
    },
  });
}

/** The autoscaler's intent: replicas only. */
export function scalerBody(name: string, k: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas: 1 + (k % 7) },
  });
}

interface Reply {
  status: number;
  bytes: number;
}

function patch(agent: http.Agent, base: string, path: string, body: string): Promise<Reply> {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench traffic stays on loopback, not ${url.hostname}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'PATCH',
        agent,
        timeout: TIMEOUT_MS,
        headers: {
          'content-type': CONTENT_TYPE,
          'content-length': Buffer.byteLength(body),
          accept: 'application/json',
        },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`PATCH ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface ApplyRun {
  applies: number;
  errors: number;
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the target (all threads, and its main thread) per apply, µs */
  cpuUs: number;
  mainCpuUs: number;
  /** CPU of this (client) process as a share of one core */
  clientCpuShare: number;
  firstError?: string;
}

/**
 * N clients, each alternating the two managers on its own object from round `k0`, for
 * `seconds` (and at most MAX_APPLIES in all). Rounds continue across calls via `rounds`.
 */
async function drive(
  target: Child,
  names: string[],
  rounds: number[],
  seconds: number,
  measure: boolean,
): Promise<ApplyRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: names.length });
  const hist = new Histogram(TIMEOUT_MS);
  let applies = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpu0 = cpuSeconds(target.pid);
  const main0 = cpuSeconds(target.pid, true);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const client = async (i: number): Promise<void> => {
    const name = names[i]!;
    while (performance.now() < end && applies < MAX_APPLIES) {
      const k = rounds[i]!++;
      const scaler = k % 2 === 1;
      const path = `${PATH}/${name}?fieldManager=${scaler ? 'autoscaler&force=true' : 'deployer'}`;
      const started = performance.now();
      const r = await patch(agent, target.url, path, scaler ? scalerBody(name, k) : deployerBody(name, k)).catch(
        (e: Error) => ({ status: 0, bytes: 0, error: e.message }),
      );
      hist.record(performance.now() - started);
      applies++;
      if (r.status !== 200) {
        errors++;
        firstError ??= `${r.status} ${'error' in r ? r.error : ''}`;
      }
    }
  };
  await Promise.all(names.map((_, i) => client(i)));
  const elapsed = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(client0);
  agent.destroy();
  const per = (sec: number): number => (sec * 1e6) / Math.max(1, applies);
  const run: ApplyRun = {
    applies,
    errors,
    perSec: applies / elapsed,
    p50Ms: hist.percentile(50),
    p99Ms: hist.percentile(99),
    cpuUs: per(cpuSeconds(target.pid) - cpu0),
    mainCpuUs: per(cpuSeconds(target.pid, true) - main0),
    clientCpuShare: (used.user + used.system) / 1e6 / elapsed,
    firstError,
  };
  if (measure) {
    process.stdout.write(
      `    ${run.perSec.toFixed(0)} applies/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms, errors ${errors}${firstError ? ` (first: ${firstError})` : ''}, ` +
        `${run.cpuUs.toFixed(1)} µs CPU/apply (main thread ${run.mainCpuUs.toFixed(1)}), client ${(100 * run.clientCpuShare).toFixed(0)}% of a core\n`,
    );
  }
  return run;
}

export async function applyScenario(ctx: Ctx): Promise<ScenarioResult> {
  const tag = runTag('a');
  const n = ctx.connections;
  const names = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  const rounds = names.map(() => 0);
  const server = await startServer(ctx.serverNodeArgs, ctx.serverArgs);
  let hello: Child | undefined;
  let best: { server: ApplyRun; hello: ApplyRun };
  let objectBytes = 0;
  try {
    await ensureNamespace(server.url, NS);
    // round 0 creates every Deployment (the deployer's first apply), unmeasured
    const agent = new http.Agent({ keepAlive: true, maxSockets: n });
    const first = await Promise.all(
      names.map((name, i) =>
        patch(agent, server.url, `${PATH}/${name}?fieldManager=deployer`, deployerBody(name, rounds[i]!++)),
      ),
    );
    agent.destroy();
    const bad = first.find((r) => r.status !== 201);
    if (bad) throw new Error(`apply-create answered ${bad.status}`);
    objectBytes = first[0]!.bytes;
    const h = await startHello(objectBytes);
    hello = h;
    const measure = async (target: Child, label: string): Promise<ApplyRun> => {
      ctx.log(`  ${label}: ${n} clients, ${WARMUP_SEC}s warm-up then ${ctx.durationSec}s`);
      await drive(target, names, rounds, Math.min(WARMUP_SEC, ctx.durationSec), false);
      return drive(target, names, rounds, ctx.durationSec, true);
    };
    best = await bestOf<'server' | 'hello', ApplyRun>(
      ctx.rounds,
      {
        server: () => measure(server, 'apiserver'),
        hello: () => measure(h, `hello-world (${objectBytes} B body)`),
      },
      (r) => (r.errors ? 0 : r.perSec),
    );
  } finally {
    await hello?.stop();
    await server.stop();
    server.cleanup();
  }
  const { server: s, hello: h } = best;
  const sample = deployerBody(`${tag}-0`, 1);
  return {
    name: 'apply',
    rows: [
      {
        scenario: 'apply',
        subject: `apiserver, ${n} clients, 2 managers alternating`,
        throughput: s.perSec,
        unit: 'applies/s',
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        ratio: s.perSec / h.perSec,
        cpuUs: s.cpuUs,
        mainCpuUs: s.mainCpuUs,
        errors: s.errors,
      },
      {
        scenario: 'apply',
        subject: `hello-world PATCH ceiling, same client (${objectBytes} B body)`,
        throughput: h.perSec,
        unit: 'req/s',
        p50Ms: h.p50Ms,
        p99Ms: h.p99Ms,
        cpuUs: h.cpuUs,
        mainCpuUs: h.mainCpuUs,
        errors: h.errors,
      },
    ],
    verdicts: [
      {
        target: `server-side apply of a 3-container Deployment by two managers ≥ ${TARGET.toLocaleString('en-US')}/s`,
        measured: `${s.perSec.toFixed(0)} applies/s, p99 ${s.p99Ms.toFixed(1)} ms, ${s.errors} non-200 (${s.applies.toLocaleString('en-US')} applies)`,
        met: s.perSec >= TARGET && s.errors === 0,
      },
    ],
    commands: [
      `# apply (in-process Node HTTP client, bench/scenarios/apply.ts): ${n} clients × one Deployment each, alternating, best of ${ctx.rounds}`,
      `PATCH ${PATH}/<name>?fieldManager=deployer          Content-Type: ${CONTENT_TYPE}  (${Buffer.byteLength(sample)} B: 3 containers, new images and env each time)`,
      `PATCH ${PATH}/<name>?fieldManager=autoscaler&force=true  Content-Type: ${CONTENT_TYPE}  (spec.replicas only)`,
    ],
    notes: [
      `every apply changes the object (${objectBytes} B as served, managedFields included); the two managers own disjoint fields, so none conflicts`,
      `client CPU: ${(100 * s.clientCpuShare).toFixed(0)}% of a core against the apiserver, ${(100 * h.clientCpuShare).toFixed(0)}% against hello-world; the client shares the machine with the server`,
    ],
  };
}
