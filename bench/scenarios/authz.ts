/**
 * Authorization scenario: GET of one ~1 KB ConfigMap over HTTPS with a bearer token, the
 * caller bound to `view` by a RoleBinding, with 1,000 Roles and 1,000 RoleBindings (to other
 * users) in the same namespace: the default chain (Node,RBAC) against AlwaysAllow, same data,
 * same wrk settings, alternating rounds (best of each). Target: RBAC ≥ 85% of AlwaysAllow.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configMapJson, ensureNamespace, expect, parallel, servedOverhead } from '../lib/http.js';
import { freePort, startServer, type ServerChild } from '../lib/procs.js';
import type { ScenarioResult } from '../lib/report.js';
import { bestOf, warmAndMeasure, type Ctx } from './common.js';

const NS = 'bench-authz';
const OBJECTS = 1000;
const OBJECT_BYTES = 1024;
const TOKEN = 'bench-token';
const RBAC = '/apis/rbac.authorization.plat.io/v1';
const G = 'rbac.authorization.plat.io';
const TARGET = 0.85;

/** 1,000 Roles, 1,000 RoleBindings to other users, the caller's view binding, and the ConfigMap read. */
async function prepare(base: string): Promise<void> {
  await ensureNamespace(base, NS);
  const size = OBJECT_BYTES - (await servedOverhead(base, NS));
  await expect(base, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMapJson('one', size), [201]);
  await parallel(OBJECTS, 32, async (i) => {
    const role = {
      metadata: { name: `role-${i}` },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`cm-${i}`] }],
    };
    await expect(base, 'POST', `${RBAC}/namespaces/${NS}/roles`, JSON.stringify(role), [201]);
    const rb = {
      metadata: { name: `rb-${i}` },
      roleRef: { apiGroup: G, kind: 'Role', name: `role-${i}` },
      subjects: [{ kind: 'User', apiGroup: G, name: `user-${i}` }],
    };
    await expect(base, 'POST', `${RBAC}/namespaces/${NS}/rolebindings`, JSON.stringify(rb), [201]);
  });
  const mine = {
    metadata: { name: 'bench-view' },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', apiGroup: G, name: 'bench' }],
  };
  await expect(base, 'POST', `${RBAC}/namespaces/${NS}/rolebindings`, JSON.stringify(mine), [201]);
}

export async function authzScenario(ctx: Ctx): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-authz-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${TOKEN},bench,uid-bench\n`);
  const servers: { mode: string; server: ServerChild; port: number }[] = [];
  try {
    for (const mode of ['Node,RBAC', 'AlwaysAllow']) {
      const port = await freePort();
      const server = await startServer(ctx.serverNodeArgs, [
        '--secure-port',
        String(port),
        '--token-auth-file',
        tokens,
        '--authorization-mode',
        mode,
      ]);
      servers.push({ mode, server, port });
      await prepare(server.url);
    }
    const path = `/api/v1/namespaces/${NS}/configmaps/one`;
    const run = (s: (typeof servers)[number]) => () =>
      warmAndMeasure(ctx, s.server.pid, {
        url: `https://127.0.0.1:${s.port}${path}`,
        threads: 1,
        connections: ctx.connections,
        durationSec: ctx.durationSec,
        headers: [`Authorization: Bearer ${TOKEN}`],
      });
    const best = await bestOf(ctx.rounds, { rbac: run(servers[0]!), allow: run(servers[1]!) }, (r) => r.reqPerSec);
    const ratio = best.rbac.reqPerSec / best.allow.reqPerSec;
    const row = (subject: string, m: typeof best.rbac, r?: number) => ({
      scenario: 'authz',
      subject,
      throughput: m.reqPerSec,
      unit: 'req/s',
      p50Ms: m.p50Ms,
      p99Ms: m.p99Ms,
      ...(r !== undefined ? { ratio: r } : {}),
      cpuUs: m.cpuUsPerRequest,
      mainCpuUs: m.mainCpuUsPerRequest,
      errors: m.errors,
    });
    return {
      name: 'authz',
      rows: [
        row('Node,RBAC (1,000 Roles + 1,000 RoleBindings), HTTPS + token', best.rbac, ratio),
        row('AlwaysAllow (same data), HTTPS + token', best.allow),
      ],
      verdicts: [
        {
          target: `GET with RBAC ≥ ${TARGET * 100}% of AlwaysAllow req/s`,
          measured: `${(ratio * 100).toFixed(1)}% (${best.rbac.reqPerSec.toFixed(0)} vs ${best.allow.reqPerSec.toFixed(0)} req/s; CPU per request ${best.rbac.cpuUsPerRequest.toFixed(1)} vs ${best.allow.cpuUsPerRequest.toFixed(1)} µs)`,
          met: ratio >= TARGET,
        },
      ],
      commands: [
        `# authz: Node,RBAC and AlwaysAllow servers, alternating, best of ${ctx.rounds}`,
        best.rbac.command,
        best.allow.command,
      ],
      notes: [
        'both servers terminate TLS in uWS on the front thread (no --client-ca-file, so no separate TLS front); both runs pay it, as they pay token authentication',
      ],
    };
  } finally {
    for (const s of servers) {
      await s.server.stop();
      s.server.cleanup();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
