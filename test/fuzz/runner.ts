/**
 * The fuzz runner shared by `npm test` (bounded) and `scripts/fuzz.mjs` (long runs): sends
 * `requests` generated cases (case i drawn from Rng.forCase(seed, i)) with a few workers,
 * checks every reply with the oracle, and for writes to the checked objects reads the object
 * before and after: a failed (or dry-run) write must leave it byte-for-byte unchanged. One
 * request at a time per checked object; requests that can delete unnamed objects run alone.
 */
import { Rng } from './rng.js';
import { discover, STABLE_NAMESPACES, SCRATCH_NAMESPACES, type ResourceType } from './catalog.js';
import { planRequest, type Observed, type Plan } from './requests.js';
import { replyProblems, type HttpReply } from './check.js';
import { Transport } from './transport.js';
import { planRaw, sendRaw } from './raw.js';
import { finalChecks } from './final.js';

export interface FuzzOptions {
  url: string;
  seed: number;
  requests: number;
  /** stop early (with a note) once this much time has passed */
  timeBudgetMs: number;
  concurrency?: number;
  /** share of cases sent as raw bytes over node:net */
  rawShare?: number;
  /** run only these case indices, in order, one at a time (reproducing findings) */
  only?: number[];
  /** false once the server process has exited */
  alive?: () => boolean;
  /** settles when the server process exits (lets a connection error be told apart from a crash) */
  exited?: Promise<unknown>;
  log?: (line: string) => void;
}

export interface Finding {
  kind: string;
  detail: string;
  index: number;
  request: string;
}

export interface FuzzReport {
  seed: number;
  sent: number;
  raw: number;
  watches: number;
  watchesCutByClient: number;
  checkedWrites: number;
  statusCounts: Record<string, number>;
  findingCounts: Record<string, number>;
  findings: Finding[];
  crashed: boolean;
  retries: number;
  clientRefused: number;
  protocolRejections: number;
  /** documented HTTP-layer limitations met (see docs/reliability.md), by name */
  limitations: Record<string, number>;
  stoppedByTime: boolean;
  durationMs: number;
  storedObjectsChecked: number;
  /** checked writes not compared because the object was already being deleted */
  skippedDeleting: number;
  /** the slowest cases (ms, index, request) */
  slowest: [number, number, string][];
}

/** the methods uWebSockets.js parses; any other one gets the connection closed */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/** the server's default --max-request-body-bytes: past it the answer is 413 and the connection may close mid-upload */
const BODY_LIMIT = 3 * 1024 * 1024;

/** uploads above this size may see their connection closed when the server answers before reading them */
const LARGE_UPLOAD = 256 * 1024;

/** request heads above this size may get the connection closed by uWS (sometimes from 64 KiB, always from about 128 KiB) */
const HEAD_LIMIT = 64 * 1024;

function headSize(method: string, target: string, headers: Record<string, string>): number {
  return method.length + target.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
}

/** One holder per checked object; `exclusive` requests wait for all others and run alone. */
class Locks {
  private keys = new Map<string, Promise<void>>();
  private shared = 0;
  private exclusive: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  async enter(exclusive: boolean, key?: string): Promise<() => void> {
    while (this.exclusive) await this.exclusive;
    let releaseExclusive: (() => void) | undefined;
    if (exclusive) {
      this.exclusive = new Promise<void>((r) => {
        releaseExclusive = r;
      });
      if (this.shared > 0)
        await new Promise<void>((r) => {
          this.drained = r;
        });
    } else this.shared++;
    let releaseKey: (() => void) | undefined;
    if (key !== undefined) {
      while (this.keys.has(key)) await this.keys.get(key);
      this.keys.set(
        key,
        new Promise<void>((r) => {
          releaseKey = r;
        }),
      );
    }
    return () => {
      if (key !== undefined) {
        this.keys.delete(key);
        releaseKey!();
      }
      if (exclusive) {
        this.exclusive = undefined;
        releaseExclusive!();
      } else if (--this.shared === 0 && this.drained) {
        const d = this.drained;
        this.drained = undefined;
        d();
      }
    };
  }
}

function describe(
  p: { method: string; target: string },
  note: string,
  body?: { bytes: Buffer; contentType: string; note: string },
  headers?: Record<string, string>,
): string {
  const t = p.target.length > 300 ? `${p.target.slice(0, 300)}…(${p.target.length} chars)` : p.target;
  const b = body
    ? ` body[${body.bytes.length}B ${body.contentType} ${body.note}] ${JSON.stringify(body.bytes.subarray(0, 200).toString('latin1'))}`
    : '';
  const h = headers && Object.keys(headers).length ? ` headers ${JSON.stringify(headers).slice(0, 300)}` : '';
  return `${p.method} ${t} (${note})${h}${b}`;
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const log = o.log ?? (() => undefined);
  const { hostname, port } = new URL(o.url);
  const transport = new Transport(hostname, Number(port), (o.concurrency ?? 8) + 2);
  const report: FuzzReport = {
    seed: o.seed,
    sent: 0,
    raw: 0,
    watches: 0,
    watchesCutByClient: 0,
    checkedWrites: 0,
    statusCounts: {},
    findingCounts: {},
    findings: [],
    crashed: false,
    retries: 0,
    clientRefused: 0,
    protocolRejections: 0,
    limitations: {},
    stoppedByTime: false,
    durationMs: 0,
    storedObjectsChecked: 0,
    skippedDeleting: 0,
    slowest: [],
  };
  const find = (kind: string, detail: string, index: number, request: string) => {
    report.findingCounts[kind] = (report.findingCounts[kind] ?? 0) + 1;
    if (report.findingCounts[kind]! <= 20) report.findings.push({ kind, detail, index, request });
    if (report.findingCounts[kind]! <= 3) log(`FINDING ${kind} #${index}: ${detail}\n    ${request.slice(0, 800)}`);
  };
  const limitation = (name: string) => {
    report.limitations[name] = (report.limitations[name] ?? 0) + 1;
  };
  const count = (status: number | string) => {
    report.statusCounts[String(status)] = (report.statusCounts[String(status)] ?? 0) + 1;
  };
  const alive = o.alive ?? (() => true);
  const slow = (ms: number, i: number, what: string) => {
    if (report.slowest.length >= 10 && ms <= report.slowest[9]![0]) return;
    report.slowest.push([ms, i, what.slice(0, 300)]);
    report.slowest.sort((a, b) => b[0] - a[0]).splice(10);
  };

  const types = await discover(o.url);
  await setup(o.url, transport);
  const observed: Observed = { rv: '1', continues: [] };
  const locks = new Locks();

  const readState = async (path: string) => {
    const s = await transport.send({
      method: 'GET',
      target: path,
      headers: { accept: 'application/json' },
      watch: false,
    });
    if (!s.ok) return { status: -1, text: s.error };
    return { status: s.reply.status, text: s.reply.status === 200 ? s.reply.body.toString('utf8') : '' };
  };

  const observe = (r: HttpReply) => {
    if (r.status !== 200 || !/json/.test(String(r.headers['content-type'])) || r.body.length > 2_000_000) return;
    try {
      const v = JSON.parse(r.body.toString('utf8'));
      const rv = v?.metadata?.resourceVersion;
      if (typeof rv === 'string' && /^\d+$/.test(rv) && Number(rv) > Number(observed.rv)) observed.rv = rv;
      if (typeof v?.metadata?.continue === 'string' && v.metadata.continue) {
        observed.continues.push(v.metadata.continue);
        if (observed.continues.length > 20) observed.continues.shift();
      }
    } catch {
      /* the oracle reports undecodable bodies */
    }
  };

  const runRaw = async (i: number, rng: Rng) => {
    const c = planRaw(rng);
    report.raw++;
    inFlight.set(i, `raw ${c.note}`);
    const res = await sendRaw(Number(port), c);
    const what = `RAW ${c.note} ${JSON.stringify(Buffer.concat(c.chunks).subarray(0, 300).toString('latin1'))}`;
    res.replies.forEach((r, k) => {
      count(r.status);
      const problems = replyProblems(c.methods[k] ?? 'GET', c.targets[k] ?? '/', r, /watch=/.test(what));
      for (const p of problems) {
        // a bare protocol-level rejection of a malformed message is the HTTP parser's answer
        if (k >= c.targets.length && p.kind === 'non-status-error' && r.body.length === 0) {
          report.protocolRejections++;
          continue;
        }
        find(p.kind, p.detail, i, what);
      }
    });
    if (c.wellFormed === 0 && c.targets.length > res.replies.length)
      limitation(
        /pipelined/.test(c.note)
          ? 'pipelining-closed'
          : /extension/.test(c.note)
            ? 'chunk-extension-closed'
            : 'trailing-garbage-closed',
      );
    if (res.replies.length < c.wellFormed)
      find(
        'no-response',
        `${res.replies.length} of ${c.wellFormed} well-formed requests answered (${res.error ?? (res.closedByServer ? 'closed' : 'timeout')})`,
        i,
        what,
      );
    if (res.garbage && res.replies.length === 0 && c.wellFormed) find('garbage-response', 'unparseable bytes', i, what);
    if (!alive()) {
      report.crashed = true;
      find('crash', 'server exited', i, what);
    }
  };

  const runPlan = async (i: number, _rng: Rng, plan: Plan) => {
    // reads cannot disturb a checked object: only writes take part in the locking
    const reads = (plan.method === 'GET' || plan.method === 'HEAD') && !plan.exclusive && !plan.check;
    inFlight.set(i, `lock ${plan.exclusive ? 'exclusive' : (plan.check?.key ?? '')}`);
    const release = reads ? () => undefined : await locks.enter(plan.exclusive, plan.check?.key);
    try {
      inFlight.set(i, 'before');
      const before = plan.check ? await readState(plan.check.path) : undefined;
      let current: any;
      if (before?.status === 200)
        try {
          current = JSON.parse(before.text);
        } catch {
          /* reported by the final checks */
        }
      const body = plan.makeBody?.(current);
      const headers = { ...plan.headers };
      if (body && headers['content-type'] === undefined) headers['content-type'] = body.contentType;
      const what = describe(plan, plan.note, body, plan.headers);
      if (plan.watch) report.watches++;
      if (plan.check) report.checkedWrites++;
      inFlight.set(i, `send ${plan.method} ${plan.target.slice(0, 100)}`);
      const sent = await transport.send({
        method: plan.method,
        target: plan.target,
        headers,
        body: body?.bytes,
        watch: plan.watch,
      });
      inFlight.set(i, 'after');
      if (sent.retried) report.retries++;
      slow(sent.ms, i, what);
      if (!sent.ok) {
        if (sent.error.startsWith('client refused')) {
          report.clientRefused++;
          return;
        }
        count('error');
        // the connection may have died with the process: if the server no longer answers, wait (bounded) for its exit event
        if (o.exited && alive()) {
          const probe = await transport.send({ method: 'GET', target: '/livez', headers: {}, watch: false });
          if (!probe.ok) await Promise.race([o.exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
        }
        // uWS closes connections carrying a method outside its fixed set, or a request head over its limit
        if (!HTTP_METHODS.has(plan.method) && alive()) {
          limitation('unknown-method-closed');
          return;
        }
        if (headSize(plan.method, plan.target, headers) > HEAD_LIMIT && alive()) {
          limitation('oversized-head-closed');
          return;
        }
        if (!alive()) {
          report.crashed = true;
          find('crash', `server exited; request failed with ${sent.error}`, i, what);
          return;
        }
        // an answer given before a large upload finished (413, or an early 4xx): the socket closes under the writer
        if (/EPIPE|ECONNRESET/.test(sent.error) && (body?.bytes.length ?? 0) > LARGE_UPLOAD) {
          limitation(body!.bytes.length > BODY_LIMIT ? 'oversized-body-closed' : 'early-answer-upload-closed');
          return;
        }
        find(
          sent.hang ? 'hang' : /HPE_/.test(sent.error) ? 'malformed-response' : 'connection-error',
          sent.error,
          i,
          what,
        );
        return;
      }
      const r = sent.reply;
      count(r.status);
      if (r.abortedByClient) report.watchesCutByClient++;
      for (const p of replyProblems(plan.method, plan.target, r, plan.watch)) find(p.kind, p.detail, i, what);
      observe(r);
      // an object already being deleted may be finished by a controller (garbage collector, namespace
      // controller) at any moment: its disappearance is not the request's doing
      if (plan.check && before && alive() && /"deletionTimestamp"/.test(before.text)) report.skippedDeleting++;
      else if (plan.check && before && alive()) {
        const failed = r.status >= 300;
        if (failed || plan.check.dryRun) {
          const after = await readState(plan.check.path);
          // controllers write some kinds' status (and Nodes' taints) at any moment
          if (
            after.status !== before.status ||
            (after.text !== before.text && !controllerWritten(plan.check.path, before.text, after.text))
          ) {
            find(
              failed ? 'half-write' : 'dry-run-wrote',
              `HTTP ${r.status} ${r.body.subarray(0, 300).toString('utf8')}; changed ${changedPaths(before.text, after.text)}; before ${before.status} ${before.text.slice(0, 400)}; after ${after.status} ${after.text.slice(0, 400)}`,
              i,
              what,
            );
          }
        }
      }
    } finally {
      release();
    }
  };

  let next = 0;
  const inFlight = new Map<number, string>();
  let crashLogged = false;
  const cases = o.only ?? [];
  const total = o.only ? cases.length : o.requests;
  const worker = async () => {
    while (next < total && !report.crashed) {
      if (Date.now() - started > o.timeBudgetMs) {
        report.stoppedByTime = true;
        return;
      }
      const i = o.only ? cases[next++]! : next++;
      const rng = Rng.forCase(o.seed, i);
      report.sent++;
      inFlight.set(i, 'start');
      lastProgress = Date.now();
      try {
        if (rng.chance(o.rawShare ?? 0.04)) await runRaw(i, rng);
        else await runPlan(i, rng, planRequest(rng, types, observed));
      } catch (e) {
        // a bug of the fuzzer itself: reported, and the run goes on
        find('fuzzer-error', (e as Error).stack ?? String(e), i, 'generator');
      }
      inFlight.delete(i);
      lastProgress = Date.now();
      if (report.crashed && !crashLogged) {
        crashLogged = true;
        log(
          `cases in flight when the server exited: ${[...inFlight.keys(), i].join(',')} (replay one: --seed ${o.seed} --only <i>)`,
        );
      }
      if (i % 5000 === 4999)
        log(
          `${report.sent} requests, ${Object.values(report.findingCounts).reduce((a, b) => a + b, 0)} findings, ${Math.round((Date.now() - started) / 1000)} s`,
        );
    }
  };
  // a stalled run (no case finished for 60 s) says where its cases are waiting
  let lastProgress = Date.now();
  const watchdog = setInterval(() => {
    if (Date.now() - lastProgress > 60_000)
      log(
        `no progress for ${Math.round((Date.now() - lastProgress) / 1000)} s; in flight: ${[...inFlight].map(([k, v]) => `#${k} ${v}`).join(', ')}`,
      );
  }, 30_000).unref();
  await Promise.all(Array.from({ length: o.only ? 1 : (o.concurrency ?? 8) }, worker));
  clearInterval(watchdog);

  if (!report.crashed && alive()) {
    try {
      const final = await finalChecks(o.url, transport, types);
      report.storedObjectsChecked = final.objects;
      for (const f of final.findings) find(f.kind, f.detail, -1, f.request);
    } catch (e) {
      find('fuzzer-error', `final checks: ${(e as Error).stack ?? e}`, -1, 'final checks');
    }
    if (!alive()) {
      report.crashed = true;
      find('crash', 'server exited during the final checks', -1, '');
    }
  }
  transport.close();
  report.durationMs = Date.now() - started;
  return report;
}

/** Namespaces the generated traffic expects, and one object of each checked name in a few types. */
async function setup(url: string, transport: Transport): Promise<void> {
  for (const ns of [...STABLE_NAMESPACES, ...SCRATCH_NAMESPACES.slice(0, 3)]) {
    const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    const r = await transport.send({
      method: 'POST',
      target: '/api/v1/namespaces',
      headers: { 'content-type': 'application/json' },
      body,
      watch: false,
    });
    if (!r.ok || (r.reply.status !== 201 && r.reply.status !== 409))
      throw new Error(`setup: cannot create namespace ${ns} on ${url}`);
  }
}

export type { ResourceType };

/** The JSON paths whose values differ between two answers (at most 20), to read a finding by. */
export function changedPaths(before: string, after: string): string {
  let a: unknown, b: unknown;
  try {
    a = JSON.parse(before);
    b = JSON.parse(after);
  } catch {
    return '(not JSON)';
  }
  const out: string[] = [];
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (out.length >= 20) return;
    if (
      x !== null &&
      y !== null &&
      typeof x === 'object' &&
      typeof y === 'object' &&
      Array.isArray(x) === Array.isArray(y)
    ) {
      const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
      for (const k of keys) walk((x as any)[k], (y as any)[k], `${path}.${k}`);
    } else if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(`${path}: ${JSON.stringify(x)?.slice(0, 80)} -> ${JSON.stringify(y)?.slice(0, 80)}`);
    }
  };
  walk(a, b, '');
  return out.length ? out.join('; ') : '(none)';
}

/** Kinds whose status a controller writes on its own (and, for Nodes, the taints). */
const CONTROLLER_STATUS =
  /\/(nodes|resourcequotas|poddisruptionbudgets|certificatesigningrequests|flowschemas|customresourcedefinitions|apiservices)\//;

/** A change a controller makes on its own: the status of CONTROLLER_STATUS kinds, a Node's taints. */
function controllerWritten(path: string, before: string, after: string): boolean {
  if (!CONTROLLER_STATUS.test(path)) return false;
  try {
    const strip = (t: string) => {
      const o = JSON.parse(t);
      delete o.status;
      if (o.spec) delete o.spec.taints;
      if (o.metadata) {
        delete o.metadata.resourceVersion;
        delete o.metadata.managedFields;
      }
      return JSON.stringify(o);
    };
    return strip(before) === strip(after);
  } catch {
    return false;
  }
}
