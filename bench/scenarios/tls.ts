/**
 * Authentication cost (issue 5 acceptance): GET of one ~1 KB ConfigMap over the plain port, over
 * TLS anonymously, and over TLS with a static bearer token, on the same server, alternating.
 * Two servers: the secure default (generated CA trusted for client certificates, so the
 * node:tls front serves TLS) and a given serving pair without client CAs (uWS serves TLS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../lib/procs.js';
import { configMapJson, ensureNamespace, expect, servedOverhead } from '../lib/http.js';
import type { Row, ScenarioResult, Verdict } from '../lib/report.js';
import { bestOf, warmAndMeasure, type Ctx, type Measured } from './common.js';

const NS = 'bench-tls';
const TOKEN = 'bench-token-0123456789';
const G = 'rbac.authorization.plat.io';

/** The ConfigMap, readable anonymously (RBAC) so both TLS runs do the same work. */
async function prepare(base: string): Promise<string> {
  await ensureNamespace(base, NS);
  await expect(
    base,
    'POST',
    `/api/v1/namespaces/${NS}/configmaps`,
    configMapJson('one', 1024 - (await servedOverhead(base, NS))),
    [201],
  );
  await expect(
    base,
    'POST',
    `/apis/${G}/v1/clusterroles`,
    JSON.stringify({
      metadata: { name: 'bench-read' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }],
    }),
    [201],
  );
  await expect(
    base,
    'POST',
    `/apis/${G}/v1/clusterrolebindings`,
    JSON.stringify({
      metadata: { name: 'bench-read' },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'bench-read' },
      subjects: ['system:unauthenticated', 'system:authenticated'].map((name) => ({
        kind: 'Group',
        apiGroup: G,
        name,
      })),
    }),
    [201],
  );
  return `/api/v1/namespaces/${NS}/configmaps/one`;
}

async function measureMode(
  ctx: Ctx,
  mode: string,
  args: string[],
): Promise<{ rows: Row[]; verdict: Verdict; commands: string[] }> {
  const server = await startServer(ctx.serverNodeArgs, ['--secure-port', '0', ...args]);
  try {
    const path = await prepare(server.url);
    const tls = `https://127.0.0.1:${server.securePort}${path}`;
    const run = (url: string, headers?: string[]) => () =>
      warmAndMeasure(ctx, server.pid, {
        url,
        threads: 1,
        connections: ctx.connections,
        durationSec: ctx.durationSec,
        headers,
      });
    const best = await bestOf(
      ctx.rounds,
      {
        plain: run(server.url + path),
        anonymous: run(tls),
        bearer: run(tls, [`Authorization: Bearer ${TOKEN}`]),
      },
      (r: Measured) => r.reqPerSec,
    );
    const row = (subject: string, m: Measured, ratio?: number): Row => ({
      scenario: `tls (${mode})`,
      subject,
      throughput: m.reqPerSec,
      unit: 'req/s',
      p50Ms: m.p50Ms,
      p99Ms: m.p99Ms,
      ratio,
      cpuUs: m.cpuUsPerRequest,
      mainCpuUs: m.mainCpuUsPerRequest,
      errors: m.errors,
    });
    const ratio = best.bearer.reqPerSec / best.anonymous.reqPerSec;
    return {
      rows: [
        row('plain HTTP', best.plain),
        row('TLS, anonymous', best.anonymous, best.anonymous.reqPerSec / best.plain.reqPerSec),
        row('TLS, bearer token', best.bearer, best.bearer.reqPerSec / best.plain.reqPerSec),
      ],
      verdict: {
        target: `${mode}: TLS GET with a bearer token ≥ 80% of TLS without authentication`,
        measured: `${(ratio * 100).toFixed(1)}% (${best.bearer.reqPerSec.toFixed(0)} vs ${best.anonymous.reqPerSec.toFixed(0)} req/s; CPU per request ${best.bearer.cpuUsPerRequest.toFixed(1)} vs ${best.anonymous.cpuUsPerRequest.toFixed(1)} µs); TLS/plain ${((100 * best.anonymous.reqPerSec) / best.plain.reqPerSec).toFixed(1)}%`,
        met: ratio >= 0.8,
      },
      commands: [
        `# tls (${mode}): plain, TLS anonymous, TLS bearer, alternating, best of ${ctx.rounds}`,
        best.plain.command,
        best.anonymous.command,
        best.bearer.command,
      ],
    };
  } finally {
    await server.stop();
    server.cleanup();
  }
}

export async function tlsScenario(ctx: Ctx): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-tls-'));
  writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},bench,uid-bench\n`);
  execFileSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'tls.key'),
      '-out',
      join(dir, 'tls.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const tokens = ['--token-auth-file', join(dir, 'tokens.csv')];
  try {
    const front = await measureMode(ctx, 'secure default, node:tls front', tokens);
    const uws = await measureMode(ctx, 'given serving pair, uWS TLS', [
      ...tokens,
      '--tls-cert-file',
      join(dir, 'tls.crt'),
      '--tls-private-key-file',
      join(dir, 'tls.key'),
    ]);
    return {
      name: 'tls',
      rows: [...front.rows, ...uws.rows],
      verdicts: [front.verdict, uws.verdict],
      commands: [...front.commands, ...uws.commands],
      notes: ['ratio column: req/s relative to the plain port of the same server'],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
