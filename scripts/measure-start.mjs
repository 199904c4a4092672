// Measures what a test pays per server: start the real server (dist/src/main.js) on a free
// loopback port with a fresh data directory, wait for its listening line and for /readyz, stop
// it with SIGTERM and wait for its exit; N times (bounded), printing median and p90.
//
//   node scripts/measure-start.mjs [--runs N] [--timeout S] [--json] [--fail] [tree...] [-- server args...]
//
// Each tree is a checkout whose dist/ is built (default: this one). With several trees the runs
// alternate between them (a, b, a, b, ...), so on a shared machine each pair sees the same load,
// and the report gives every tree's figures and their ratio to the first tree's.
//   --runs N     starts per tree (default 10, at most 200)
//   --timeout S  bound on one start or one stop, in seconds (default 60)
//   --fail       a start that fails (an unreadable --audit-policy-file): time to exit 1
//   --writes N   create N ConfigMaps (one at a time) once ready, before the stop (default 0)
//   --json       one JSON object instead of the table
// Figures: listen = spawn to the "listening on" line (what test/helpers/server.ts waits for),
// ready = spawn to the first 200 of /readyz, cpu = the process's CPU (all threads) when ready,
// from /proc, stop = SIGTERM to exit, drain = the server's own "Shutdown complete" duration
// (shutdown() alone, without the process's exit).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash < 0 ? argv : argv.slice(0, dash);
const serverArgs = dash < 0 ? [] : argv.slice(dash + 1);
function flag(name, def) {
  const i = own.indexOf(name);
  if (i < 0) return def;
  const v = own[i + 1];
  own.splice(i, 2);
  return v;
}
const runs = Math.min(200, Math.max(1, Number(flag('--runs', '10'))));
const timeoutMs = Math.max(1, Number(flag('--timeout', '60'))) * 1000;
const writes = Math.min(1000, Math.max(0, Number(flag('--writes', '0'))));
const json = own.includes('--json');
const fail = own.includes('--fail');
const trees = own.filter((a) => !a.startsWith('--')).map((t) => resolve(t));
if (trees.length === 0) trees.push(resolve('.'));

const CLK_TCK = 100;
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

function bounded(promise, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

async function readyz(port, deadline) {
  for (let i = 0; i < 10_000 && performance.now() < deadline; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) return;
    } catch {
      // not accepting yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('/readyz never answered 200');
}

async function once(tree) {
  const dir = mkdtempSync(join(tmpdir(), 'plat-measure-'));
  const args = ['--port', '0', '--secure-port', 'off', '--data-dir', dir, ...serverArgs];
  if (fail) args.push('--audit-policy-file', join(dir, 'missing-policy.yaml'), '--audit-log-path', '-');
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(tree, 'dist/src/main.js'), ...args], {
    cwd: tree,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((r) => proc.once('exit', (code) => r(code)));
  let err = '';
  proc.stderr.on('data', (d) => {
    err += d;
  });
  try {
    if (fail) {
      const code = await bounded(exited, 'failing start');
      if (code === 0) throw new Error('the failing start exited 0');
      return { listen: performance.now() - t0 };
    }
    let out = '';
    const port = await bounded(
      new Promise((res, rej) => {
        proc.stdout.on('data', (d) => {
          out += d;
          const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
          if (m) res(Number(m[1]));
        });
        void exited.then((code) => rej(new Error(`server exited with ${code}: ${err}`)));
      }),
      'start',
    );
    const listen = performance.now() - t0;
    await readyz(port, t0 + timeoutMs);
    const ready = performance.now() - t0;
    const cpu = cpuSeconds(proc.pid) * 1000;
    for (let i = 0; i < writes; i++) {
      const r = await bounded(
        fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ metadata: { name: `m${i}` }, data: { k: 'v' } }),
        }),
        'write',
      );
      await r.arrayBuffer();
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
    }
    const s0 = performance.now();
    proc.kill('SIGTERM');
    const code = await bounded(exited, 'stop');
    if (code !== 0) throw new Error(`stop exited with ${code}: ${err}`);
    const stop = performance.now() - s0;
    // the server's own figure for shutdown() (src/server/cli.ts logs it); the rest is the exit
    const m = /Shutdown complete duration="([\d.]+)s"/.exec(err);
    return { listen, ready, cpu, stop, drain: m ? Number(m[1]) * 1000 : Number.NaN };
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function quantile(xs, q) {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
}

const samples = trees.map(() => ({ listen: [], ready: [], cpu: [], stop: [], drain: [] }));
const started = Date.now();
for (let r = 0; r < runs; r++) {
  // alternate which tree goes first, so neither always follows the other's stop
  const order = trees.map((_, i) => i);
  if (r % 2 === 1) order.reverse();
  for (const i of order) {
    const m = await once(trees[i]);
    for (const [k, v] of Object.entries(m)) samples[i][k].push(v);
  }
}

const metrics = fail ? ['listen'] : ['listen', 'ready', 'cpu', 'stop', 'drain'];
const summary = trees.map((tree, i) => {
  const o = { tree, runs };
  for (const k of metrics) o[k] = { median: quantile(samples[i][k], 0.5), p90: quantile(samples[i][k], 0.9) };
  return o;
});
if (json) {
  process.stdout.write(`${JSON.stringify({ fail, seconds: (Date.now() - started) / 1000, summary })}\n`);
} else {
  const label = fail ? 'exit' : 'listen';
  const head = ['tree', ...metrics.map((k) => (k === 'listen' ? label : k)).flatMap((k) => [`${k} med`, `${k} p90`])];
  process.stdout.write(`${runs} ${fail ? 'failing starts' : 'starts'} per tree, ms (${head.join(', ')}):\n`);
  for (const s of summary) {
    const cells = metrics.flatMap((k) => [s[k].median, s[k].p90]).map((v) => v.toFixed(0).padStart(6));
    process.stdout.write(`${s.tree}  ${cells.join(' ')}\n`);
  }
  for (const s of summary.slice(1)) {
    const ratios = metrics.map((k) => `${k} ${(s[k].median / summary[0][k].median).toFixed(2)}`);
    process.stdout.write(`${s.tree} / ${summary[0].tree} (medians): ${ratios.join(', ')}\n`);
  }
}
