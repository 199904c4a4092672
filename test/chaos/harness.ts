/**
 * Crash-consistency trials. One data directory for the whole run; each trial: concurrent
 * writers (creates, updates with resourceVersion preconditions, deletes with preconditions)
 * plus a watcher from a known version and a lister, `kill -9` at a random moment, restart on
 * the same directory, then verify every key against what was acknowledged (model.ts), the
 * version counter against everything clients saw, and the watcher's resume.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { startServer, type TestServer } from '../helpers/server.js';
import { openWatch, type WatchClient } from '../helpers/watch.js';
import { Rng } from '../fuzz/rng.js';
import { NS, TYPES, bodyFor, contentOf, judge, type Content, type KeyState, type Op } from './model.js';

export interface ChaosOptions {
  seed: number;
  trials: number;
  writers?: number;
  keysPerWriter?: number;
  /** the kill lands uniformly in [min, max] ms after the writers start */
  killWindowMs?: [number, number];
  /** stop starting trials after this long */
  timeBudgetMs?: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  seed: number;
  trials: number;
  acknowledged: { creates: number; updates: number; deletes: number };
  inFlightAtKill: number;
  inFlightApplied: number;
  lost: string[];
  problems: string[];
  resumes: { continued: number; expired: number };
  durationMs: number;
}

const CALL_LIMIT_MS = 10_000;

interface Reply {
  status: number;
  json: any;
  text: string;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(base + path, {
    method,
    signal: AbortSignal.timeout(CALL_LIMIT_MS),
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const log = o.log ?? (() => undefined);
  const rng = new Rng(o.seed);
  const report: ChaosReport = {
    seed: o.seed,
    trials: 0,
    acknowledged: { creates: 0, updates: 0, deletes: 0 },
    inFlightAtKill: 0,
    inFlightApplied: 0,
    lost: [],
    problems: [],
    resumes: { continued: 0, expired: 0 },
    durationMs: 0,
  };
  const writers = o.writers ?? 12;
  const perWriter = o.keysPerWriter ?? 6;
  const [killMin, killMax] = o.killWindowMs ?? [150, 1500];
  const keys: KeyState[][] = Array.from({ length: writers }, (_, w) =>
    Array.from({ length: perWriter }, (_, i) => ({
      type: TYPES[(w + i) % TYPES.length]!,
      name: `w${w}-k${i}`,
      acked: undefined,
    })),
  );
  const all = keys.flat();
  const dir = mkdtempSync(join(tmpdir(), 'plat-chaos-'));
  let server: TestServer = await startServer([], dir);
  let seq = 0;
  /** the highest version any client saw from the server (objects, lists, watch events) */
  let maxSeen = 0n;
  /** the highest version of an acknowledged write */
  let maxAcked = 0n;
  const see = (rv: unknown) => {
    if (typeof rv === 'string' && /^\d+$/.test(rv) && BigInt(rv) > maxSeen) maxSeen = BigInt(rv);
  };
  try {
    const ns = await call(server.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
    if (ns.status !== 201) throw new Error(`cannot create namespace: ${ns.status} ${ns.text}`);
    for (let trial = 1; trial <= o.trials && Date.now() - started < (o.timeBudgetMs ?? Infinity); trial++) {
      const base = server.url;
      const watchType = TYPES[trial % TYPES.length]!;
      const startList = await call(base, 'GET', `${watchType.path}?limit=1`);
      const watchFrom = String(startList.json?.metadata?.resourceVersion);
      see(watchFrom);
      const watcher = await openWatch(
        base,
        `${watchType.path}?watch=1&resourceVersion=${watchFrom}&allowWatchBookmarks=true`,
      );
      let killed = false;
      let inFlight = 0;
      const exited = once(server.proc, 'exit');
      const killAt = rng.range(killMin, killMax);
      const kill = () => {
        if (!killed) {
          killed = true;
          report.inFlightAtKill += inFlight;
          server.proc.kill('SIGKILL');
        }
      };
      const timer = setTimeout(kill, killAt);
      const acks: { type: string; rv: bigint }[] = [];

      const writer = async (w: number) => {
        const wr = new Rng((o.seed ^ Math.imul(trial, 0x9e3779b1) ^ (w << 8)) >>> 0);
        for (let n = 0; n < 10_000 && !killed; n++) {
          const k = wr.pick(keys[w]!);
          const content: Content = {
            v: `w${w}-${++seq}`,
            pad: wr.text(wr.range(16, 4096)).replace(/[^\x20-\x7e]/g, 'x'),
          };
          const op: Op = !k.acked
            ? { kind: 'create', content }
            : wr.chance(0.7)
              ? { kind: 'update', content }
              : { kind: 'delete' };
          k.pending = op;
          inFlight++;
          let r: Reply;
          try {
            if (op.kind === 'create') r = await call(base, 'POST', k.type.path, bodyFor(k.type, k.name, op.content));
            else if (op.kind === 'update')
              r = await call(base, 'PUT', `${k.type.path}/${k.name}`, bodyFor(k.type, k.name, op.content, k.acked!.rv));
            else
              r = await call(base, 'DELETE', `${k.type.path}/${k.name}`, {
                kind: 'DeleteOptions',
                apiVersion: 'v1',
                preconditions: { resourceVersion: String(k.acked!.rv), uid: k.acked!.uid },
              });
          } catch {
            inFlight--;
            return; // the server died under this request: its outcome stays pending
          }
          inFlight--;
          const ok = op.kind === 'create' ? r.status === 201 : r.status === 200;
          if (!ok) {
            report.problems.push(
              `trial ${trial}: ${op.kind} ${k.type.name}/${k.name} answered ${r.status} ${r.text.slice(0, 200)}`,
            );
            k.pending = undefined;
            continue;
          }
          // a delete answers with the deleted object or (as upstream does for some kinds) a Success Status
          if (op.kind === 'delete' && r.json?.kind === 'Status' && r.json.status === 'Success') {
            k.acked = undefined;
            k.pending = undefined;
            report.acknowledged.deletes++;
            continue;
          }
          if (!/^\d+$/.test(String(r.json?.metadata?.resourceVersion))) {
            report.problems.push(
              `trial ${trial}: ${op.kind} ${k.type.name}/${k.name} answered ${r.status} without a resourceVersion: ${r.text.slice(0, 300)}`,
            );
            k.pending = undefined;
            continue;
          }
          const rv = BigInt(r.json.metadata.resourceVersion);
          see(r.json.metadata.resourceVersion);
          if (rv > maxAcked) maxAcked = rv;
          acks.push({ type: k.type.name, rv });
          if (op.kind === 'delete') {
            k.acked = undefined;
            report.acknowledged.deletes++;
          } else {
            const { content: back, problems } = contentOf(k.type, r.json);
            if (problems.length || back?.v !== op.content.v)
              report.problems.push(
                `trial ${trial}: ${op.kind} reply for ${k.name} is not what was written: ${problems.join('; ')}`,
              );
            if (k.acked && rv <= k.acked.rv)
              report.problems.push(`trial ${trial}: ${k.name} version ${rv} not above previous ${k.acked.rv}`);
            k.acked = { uid: r.json.metadata.uid, rv, content: op.content };
            report.acknowledged[op.kind === 'create' ? 'creates' : 'updates']++;
          }
          k.pending = undefined;
        }
      };
      const lister = async () => {
        for (let n = 0; n < 10_000 && !killed; n++) {
          try {
            see((await call(base, 'GET', `${TYPES[n % TYPES.length]!.path}?limit=2`)).json?.metadata?.resourceVersion);
          } catch {
            return;
          }
        }
      };
      await Promise.all([...Array.from({ length: writers }, (_, w) => writer(w)), lister()]);
      kill();
      clearTimeout(timer);
      await exited;
      await watcher.waitClosed(5_000).catch(() => watcher.close());
      const watched = checkWatch(trial, watcher, watchType.name, acks, BigInt(watchFrom), report);
      for (const e of watcher.events) see(e.object?.metadata?.resourceVersion);

      try {
        server = await startServer([], dir);
      } catch (e) {
        report.problems.push(
          `trial ${trial}: the server did not restart on its data directory: ${(e as Error).message.slice(0, 600)}`,
        );
        break;
      }
      await verify(trial, server.url, all, maxAcked, report);
      await checkVersionsAndResume(trial, server.url, watchType.path, watched, maxAcked, maxSeen, report);
      report.trials++;
      log(
        `trial ${trial}: killed after ${killAt} ms; acknowledged so far ${JSON.stringify(report.acknowledged)}; problems ${report.problems.length}`,
      );
    }
  } finally {
    await server.stop('SIGKILL');
    server.cleanup();
  }
  report.durationMs = Date.now() - started;
  return report;
}

/** Events before the kill: in version order, and none missing up to the last one received. */
function checkWatch(
  trial: number,
  w: WatchClient,
  type: string,
  acks: { type: string; rv: bigint }[],
  from: bigint,
  report: ChaosReport,
): bigint {
  if (w.status !== 200) {
    report.problems.push(`trial ${trial}: watch answered ${w.status}`);
    return from;
  }
  let last = from;
  const seen = new Set<bigint>();
  for (const e of w.events) {
    const rv = BigInt(e.object?.metadata?.resourceVersion ?? '0');
    if (e.type === 'ERROR') {
      report.problems.push(`trial ${trial}: watch ERROR ${JSON.stringify(e.object).slice(0, 200)}`);
      continue;
    }
    if (rv < last || (rv === last && e.type !== 'BOOKMARK'))
      report.problems.push(`trial ${trial}: watch event ${e.type} rv ${rv} after ${last}`);
    if (e.type !== 'BOOKMARK') seen.add(rv);
    if (rv > last) last = rv;
  }
  for (const a of acks) {
    if (a.type === type && a.rv > from && a.rv <= last && !seen.has(a.rv))
      report.problems.push(`trial ${trial}: watch skipped acknowledged ${type} write at rv ${a.rv}`);
  }
  return last;
}

/** Every key against the model; no object the model does not know of. Then the model follows the store. */
async function verify(
  trial: number,
  base: string,
  all: KeyState[],
  maxAcked: bigint,
  report: ChaosReport,
): Promise<void> {
  for (const t of TYPES) {
    const list = await call(base, 'GET', t.path);
    if (list.status !== 200) {
      report.problems.push(`trial ${trial}: list ${t.name} after restart: ${list.status}`);
      continue;
    }
    const listRV = BigInt(list.json.metadata.resourceVersion);
    if (listRV < maxAcked)
      report.problems.push(
        `trial ${trial}: list version ${listRV} after restart is below the acknowledged ${maxAcked}`,
      );
    const known = new Set(all.filter((k) => k.type === t).map((k) => k.name));
    for (const item of list.json.items)
      if (!known.has(item.metadata.name))
        report.problems.push(`trial ${trial}: unexpected ${t.name}/${item.metadata.name}`);
  }
  for (const k of all) {
    const r = await call(base, 'GET', `${k.type.path}/${k.name}`);
    if (r.status !== 200 && r.status !== 404) {
      report.problems.push(`trial ${trial}: GET ${k.name} after restart: ${r.status} ${r.text.slice(0, 200)}`);
      continue;
    }
    const verdict = judge(k, r.status === 200 ? r.json : undefined);
    for (const p of verdict.problems) report.problems.push(`trial ${trial}: ${p}`);
    if (verdict.lost) report.lost.push(`trial ${trial}: ${verdict.lost}`);
    if (verdict.applied) report.inFlightApplied++;
    k.acked = verdict.now;
    k.pending = undefined;
  }
}

/**
 * New versions must exceed everything handed out before the crash; a watch resumed from the
 * last version the watcher saw either continues (then it sees the new writes, nothing at or
 * below its version) or is refused with 410 Expired (history restarts at the restart floor).
 */
async function checkVersionsAndResume(
  trial: number,
  base: string,
  path: string,
  lastSeen: bigint,
  maxAcked: bigint,
  maxSeen: bigint,
  report: ChaosReport,
): Promise<void> {
  const resumed = await openWatch(base, `${path}?watch=1&resourceVersion=${lastSeen}`);
  const probe = `probe-${trial}`;
  const created = await call(
    base,
    'POST',
    path,
    bodyFor(TYPES.find((t) => t.path === path)!, probe, { v: `probe-${trial}`, pad: 'p' }),
  );
  if (created.status !== 201) {
    report.problems.push(`trial ${trial}: probe create ${created.status} ${created.text.slice(0, 200)}`);
    resumed.close();
    return;
  }
  const rv = BigInt(created.json.metadata.resourceVersion);
  if (rv <= maxAcked)
    report.problems.push(
      `trial ${trial}: first version after restart ${rv} is not above ${maxAcked}, the highest acknowledged write before the crash`,
    );
  else if (rv <= maxSeen)
    report.problems.push(
      `trial ${trial}: first version after restart ${rv} is not above ${maxSeen}, the highest version a list or watch showed before the crash (versions handed out before they were durable are reused)`,
    );
  try {
    await resumed.waitFor(
      (evs) => evs.some((e) => e.type === 'ERROR' || e.object?.metadata?.name === probe),
      'the probe event or 410',
      5_000,
    );
    const err = resumed.events.find((e) => e.type === 'ERROR');
    if (err) {
      if (err.object?.code === 410) report.resumes.expired++;
      else report.problems.push(`trial ${trial}: resumed watch ERROR ${JSON.stringify(err.object).slice(0, 200)}`);
    } else {
      report.resumes.continued++;
      for (const e of resumed.events) {
        if (e.type !== 'BOOKMARK' && BigInt(e.object.metadata.resourceVersion) <= lastSeen)
          report.problems.push(
            `trial ${trial}: resumed watch replayed rv ${e.object.metadata.resourceVersion} <= ${lastSeen}`,
          );
      }
    }
  } catch (e) {
    report.problems.push(`trial ${trial}: resumed watch: ${(e as Error).message}`);
  } finally {
    resumed.close();
  }
  const del = await call(base, 'DELETE', `${path}/${probe}`);
  if (del.status !== 200) report.problems.push(`trial ${trial}: probe delete ${del.status}`);
}
