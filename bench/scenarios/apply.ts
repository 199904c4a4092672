/**
 * Server-side apply of a 3-container Deployment over HTTP, repeated with changes by two field
 * managers: each of N concurrent clients owns one Deployment and alternates a `deployer`
 * apply (the whole intent minus replicas: new image tags and an env value each time, no
 * force) with an `autoscaler` apply of spec.replicas only (force=true, as a controller
 * should). Every apply changes the object and none conflicts; a non-200 counts as an error.
 * The load is wrk with bench/apply-managers.lua (one thread, --connections connections, requests
 * spread over the objects in turn), as the other write scenarios use wrk: a Node HTTP client on the
 * same two cores spent ≈ 30–40 µs of CPU per apply itself and held the server to 0.5–0.7 of
 * the rate wrk drives ("Apply, tenth round" in docs/benchmarks.md). Bounded by time (--duration
 * after a 2 s warm-up). The ceiling is the hello-world server answering the same PATCHes from
 * the same wrk, with a body of the applied object's size.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHello, startServer, type Child } from '../lib/procs.js';
import { ensureNamespace } from '../lib/http.js';
import type { ScenarioResult } from '../lib/report.js';
import type { WrkRun } from '../lib/wrk.js';
import { bestOf, runTag, warmAndMeasure, type Ctx, type Measured } from './common.js';

const NS = 'bench-apply';
const PATH = `/apis/apps/v1/namespaces/${NS}/deployments`;
const CONTENT_TYPE = 'application/apply-patch+yaml';
const SCRIPT = fileURLToPath(new URL('../../../bench/apply-managers.lua', import.meta.url));
/** rounds between the first rounds of two wrk runs (even: a run starts with the deployer) */
const ROUNDS_PER_RUN = 1_000_000;
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

/** The script's body templates: @N@ the name, @K@ the round, @R@ the replicas (bench/apply-managers.lua, one per line of the file it reads). */
function templates(): [string, string] {
  const deployer = deployerBody('@N@', 987_654_321).replaceAll('987654321', '@K@');
  const scaler = scalerBody('@N@', 0).replace('"replicas":1', '"replicas":@R@');
  if (!deployer.includes('@K@') || !scaler.includes('@R@')) throw new Error('apply: body templates lost their slots');
  return [deployer, scaler];
}

export async function applyScenario(ctx: Ctx): Promise<ScenarioResult> {
  const tag = runTag('a');
  const n = ctx.connections;
  const names = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-apply-'));
  const bodies = join(dir, 'bodies.txt');
  writeFileSync(bodies, `${templates().join('\n')}\n`);
  const server = await startServer(ctx.serverNodeArgs, ctx.serverArgs).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  // every wrk run (warm-up or measured) starts at rounds no run used before: each apply changes its object
  let first = 0;
  const argsAt = (): string[] => {
    first += ROUNDS_PER_RUN;
    return [tag, String(n), String(first), '200', bodies];
  };
  const step = (target: Child): Promise<Measured> => {
    const warmArgs = argsAt();
    const run: WrkRun = {
      url: target.url + PATH,
      threads: 1,
      connections: n,
      durationSec: ctx.durationSec,
      script: SCRIPT,
      scriptArgs: argsAt(),
    };
    return warmAndMeasure(ctx, target.pid, run, warmArgs);
  };
  let hello: Child | undefined;
  let best: { server: Measured; hello: Measured };
  let objectBytes = 0;
  try {
    await ensureNamespace(server.url, NS);
    // round 0 creates every Deployment (the deployer's first apply), unmeasured
    const agent = new http.Agent({ keepAlive: true, maxSockets: n });
    const created = await Promise.all(
      names.map((name) => patch(agent, server.url, `${PATH}/${name}?fieldManager=deployer`, deployerBody(name, 0))),
    );
    agent.destroy();
    const bad = created.find((r) => r.status !== 201);
    if (bad) throw new Error(`apply-create answered ${bad.status}`);
    objectBytes = created[0]!.bytes;
    const h = await startHello(objectBytes);
    hello = h;
    best = await bestOf<'server' | 'hello', Measured>(
      ctx.rounds,
      {
        server: () => step(server),
        hello: () => step(h),
      },
      okPerSec,
    );
  } finally {
    await hello?.stop();
    await server.stop();
    server.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  const { server: s, hello: h } = best;
  const ok = okPerSec(s);
  const sample = deployerBody(`${tag}-0`, 1);
  return {
    name: 'apply',
    rows: [
      {
        scenario: 'apply',
        subject: `apiserver, ${n} connections, 2 managers alternating`,
        throughput: ok,
        unit: 'applies/s',
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        ratio: ok / okPerSec(h),
        cpuUs: s.cpuUsPerRequest,
        mainCpuUs: s.mainCpuUsPerRequest,
        errors: s.errors,
      },
      {
        scenario: 'apply',
        subject: `hello-world PATCH ceiling, same wrk script (${objectBytes} B body)`,
        throughput: h.reqPerSec,
        unit: 'req/s',
        p50Ms: h.p50Ms,
        p99Ms: h.p99Ms,
        cpuUs: h.cpuUsPerRequest,
        mainCpuUs: h.mainCpuUsPerRequest,
        errors: h.errors,
      },
    ],
    verdicts: [
      {
        target: `server-side apply of a 3-container Deployment by two managers ≥ ${TARGET.toLocaleString('en-US')}/s`,
        measured: `${ok.toFixed(0)} applies/s (200s only), p99 ${s.p99Ms.toFixed(1)} ms, ${s.errors} non-200 (${s.requests.toLocaleString('en-US')} applies)`,
        met: ok >= TARGET && s.errors === 0,
      },
    ],
    commands: [
      `# apply (wrk -t1 -c${n}, bench/apply-managers.lua, bench/scenarios/apply.ts): ${n} Deployments, the two managers in turn on each, alternating with the ceiling, best of ${ctx.rounds}`,
      s.command,
      `PATCH ${PATH}/<name>?fieldManager=deployer          Content-Type: ${CONTENT_TYPE}  (${Buffer.byteLength(sample)} B: 3 containers, new images and env each time)`,
      `PATCH ${PATH}/<name>?fieldManager=autoscaler&force=true  Content-Type: ${CONTENT_TYPE}  (spec.replicas only)`,
    ],
    notes: [
      `every apply changes the object (${objectBytes} B as served, managedFields included); the two managers own disjoint fields, so none conflicts`,
      'wrk shares the machine with the server (one thread); until the tenth round this scenario drove the applies from a Node HTTP client in the bench process, which held the server to 0.5–0.7 of the rate wrk drives',
    ],
  };
}

/** Replies per second that were 200s. */
function okPerSec(r: Measured): number {
  return (r.reqPerSec * (r.requests - r.errors)) / Math.max(1, r.requests);
}
