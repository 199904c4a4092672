/**
 * API Priority and Fairness on the front thread: the FlowSchemas and PriorityLevelConfigurations
 * (kept current from change events) classify each authenticated request into a flow and a
 * priority level, and the dispatcher decides when it runs. Answers name the matched objects in
 * the `X-<Product>-PF-FlowSchema-UID` / `-PriorityLevel-UID` headers; rejections are 429 with
 * Retry-After. Counters feed the `apiserver_flowcontrol_*` metrics.
 */
import type { CachedObject, ChangeEvent } from '../actors/protocol.js';
import { typeKeyOf } from '../actors/routing.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { UserInfo } from '../auth/types.js';
import type { RequestInfo } from '../server/request-info.js';
import { Dispatcher, flowHash, type LevelConfig, type RejectReason } from './dispatcher.js';
import { compileSchema, flowKey, orderSchemas, type CompiledSchema } from './matching.js';
import { estimateWork, type Counts } from './work-estimate.js';

export interface Classification { schema: CompiledSchema; level: LevelConfig | undefined; flow: string }

export class PriorityAndFairness {
  readonly dispatcher: Dispatcher;
  readonly schemaKey: string;
  readonly levelKey: string;
  readonly headers: { schema: string; level: string };
  private readonly schemaObjs = new Map<string, any>();
  private readonly levelObjs = new Map<string, any>();
  private schemas: CompiledSchema[] = [];
  private levelConfigs = new Map<string, LevelConfig>();
  private dirty = false;
  /** `<schema>\0<level>` → counts */
  readonly dispatched = new Map<string, number>();
  readonly rejected = new Map<string, number>();
  /** `<schema>\0<level>` → estimated seats: count per bucket of SEAT_BUCKETS (last is +Inf), sum */
  readonly estimated = new Map<string, { buckets: number[]; sum: number }>();
  /** called after each configuration change (status writer, mandatory objects) */
  onConfigChange?: () => void;
  /** stored objects and watchers of a resource, for the work estimates (set by the server) */
  counts: Counts = { objects: () => 0, watchers: () => 0 };

  constructor(identity: Identity, readonly serverLimit: number, maxWaitMs: number) {
    const group = groupFor(identity, 'flowcontrol.apiserver.plat.io');
    this.schemaKey = typeKeyOf(group, 'flowschemas');
    this.levelKey = typeKeyOf(group, 'prioritylevelconfigurations');
    const product = identity.product[0]!.toUpperCase() + identity.product.slice(1);
    this.headers = { schema: `X-${product}-PF-FlowSchema-UID`, level: `X-${product}-PF-PriorityLevel-UID` };
    this.dispatcher = new Dispatcher(serverLimit, maxWaitMs);
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.put(o.typeKey, o.name, o.json);
    this.recompile();
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.typeKey !== this.schemaKey && ev.typeKey !== this.levelKey) continue;
      if (ev.type === 'DELETED') (ev.typeKey === this.schemaKey ? this.schemaObjs : this.levelObjs).delete(ev.name);
      else this.put(ev.typeKey, ev.name, ev.json);
      this.dirty = true;
    }
    if (this.dirty) this.recompile();
  }

  private put(typeKey: string, name: string, json: string): void {
    if (typeKey === this.schemaKey) this.schemaObjs.set(name, JSON.parse(json));
    else if (typeKey === this.levelKey) this.levelObjs.set(name, JSON.parse(json));
  }

  private recompile(): void {
    this.dirty = false;
    this.schemas = orderSchemas([...this.schemaObjs.values()].map(compileSchema));
    this.levelConfigs = new Map([...this.levelObjs.values()].map((o) => [o.metadata.name, levelConfig(o)]));
    this.dispatcher.configure([...this.levelConfigs.values()]);
    this.onConfigChange?.();
  }

  flowSchemas(): readonly any[] { return [...this.schemaObjs.values()]; }
  priorityLevels(): ReadonlyMap<string, any> { return this.levelObjs; }

  /** The first matching schema whose priority level exists (upstream skips dangling ones). */
  classify(user: UserInfo, info: RequestInfo): Classification | undefined {
    for (const s of this.schemas) {
      if (!s.matches(user, info)) continue;
      const level = this.levelConfigs.get(s.level);
      if (!level) continue;
      return { schema: s, level, flow: flowKey(s, user, info) };
    }
    return undefined;
  }

  /**
   * Admits a classified request: `go(release)` when it may run (release once it is answered),
   * `refuse(reason)` when it is rejected. Returns a cancel function while it waits in a queue.
   */
  admit(c: Classification, info: RequestInfo, query: URLSearchParams, go: (release: () => void) => void, refuse: (reason: RejectReason) => void): (() => void) | undefined {
    const key = `${c.schema.name}\u0000${c.level!.name}`;
    const work = estimateWork(info, query, this.counts, this.dispatcher.levels.get(c.level!.name)?.maxSeats ?? 1);
    this.observeSeats(key, Math.max(work.initialSeats, work.finalSeats));
    return this.dispatcher.admit(c.level!.name, flowHash(c.flow), (release) => {
      this.dispatched.set(key, (this.dispatched.get(key) ?? 0) + 1);
      go(release);
    }, (reason) => {
      const rk = `${key}\u0000${reason}`;
      this.rejected.set(rk, (this.rejected.get(rk) ?? 0) + 1);
      refuse(reason);
    }, work);
  }

  private observeSeats(key: string, seats: number): void {
    let h = this.estimated.get(key);
    if (!h) this.estimated.set(key, h = { buckets: new Array(SEAT_BUCKETS.length + 1).fill(0), sum: 0 });
    let i = 0;
    while (i < SEAT_BUCKETS.length && seats > SEAT_BUCKETS[i]!) i++;
    h.buckets[i]!++;
    h.sum += seats;
  }

  /** Prometheus text of the `apiserver_flowcontrol_*` families. */
  metricsText(): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string) => lines.push(`# HELP ${name} [BETA] ${help}`, `# TYPE ${name} ${type}`);
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    family('apiserver_flowcontrol_dispatched_requests_total', 'counter', 'Number of requests executed by API Priority and Fairness subsystem');
    for (const [k, n] of this.dispatched) {
      const [fs, pl] = k.split('\u0000');
      lines.push(`apiserver_flowcontrol_dispatched_requests_total{flow_schema="${esc(fs!)}",priority_level="${esc(pl!)}"} ${n}`);
    }
    family('apiserver_flowcontrol_rejected_requests_total', 'counter', 'Number of requests rejected by API Priority and Fairness subsystem');
    for (const [k, n] of this.rejected) {
      const [fs, pl, reason] = k.split('\u0000');
      lines.push(`apiserver_flowcontrol_rejected_requests_total{flow_schema="${esc(fs!)}",priority_level="${esc(pl!)}",reason="${reason}"} ${n}`);
    }
    const ws = 'apiserver_flowcontrol_work_estimated_seats';
    lines.push(`# HELP ${ws} [ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness`, `# TYPE ${ws} histogram`);
    for (const [k, h] of this.estimated) {
      const [fs, pl] = k.split('\u0000');
      const labels = `flow_schema="${esc(fs!)}",priority_level="${esc(pl!)}"`;
      let cum = 0;
      SEAT_BUCKETS.forEach((b, i) => { cum += h.buckets[i]!; lines.push(`${ws}_bucket{${labels},le="${b}"} ${cum}`); });
      cum += h.buckets[SEAT_BUCKETS.length]!;
      lines.push(`${ws}_bucket{${labels},le="+Inf"} ${cum}`, `${ws}_sum{${labels}} ${h.sum}`, `${ws}_count{${labels}} ${cum}`);
    }
    const gauge = (name: string, help: string, value: (l: import('./dispatcher.js').Level) => number) => {
      family(name, 'gauge', help);
      for (const [pl, l] of this.dispatcher.levels) lines.push(`${name}{priority_level="${esc(pl)}"} ${value(l)}`);
    };
    gauge('apiserver_flowcontrol_current_executing_requests', 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', (l) => l.requests);
    gauge('apiserver_flowcontrol_current_executing_seats', 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem', (l) => l.executing);
    gauge('apiserver_flowcontrol_current_inqueue_requests', 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', (l) => l.waiting);
    gauge('apiserver_flowcontrol_nominal_limit_seats', 'Nominal number of execution seats configured for each priority level', (l) => (l.cfg.exempt ? 0 : l.nominal));
    gauge('apiserver_flowcontrol_current_limit_seats', 'current derived number of execution seats available to each priority level', (l) => (l.cfg.exempt ? 0 : l.nominal - l.lentOut + l.borrowed));
    return lines.join('\n') + '\n';
  }
}

/** upstream's buckets of apiserver_flowcontrol_work_estimated_seats */
const SEAT_BUCKETS = [1, 2, 4, 10];

export function levelConfig(o: any): LevelConfig {
  const spec = o.spec ?? {};
  const exempt = spec.type === 'Exempt';
  const limited = spec.limited ?? {};
  const lr = limited.limitResponse ?? {};
  const q = lr.queuing ?? {};
  return {
    name: o.metadata.name,
    uid: o.metadata.uid ?? '',
    exempt,
    shares: exempt ? 0 : (limited.nominalConcurrencyShares ?? 30),
    lendablePercent: exempt ? 0 : (limited.lendablePercent ?? 0),
    borrowingLimitPercent: limited.borrowingLimitPercent ?? undefined,
    reject: lr.type === 'Reject',
    queues: q.queues ?? 64,
    handSize: q.handSize ?? 8,
    queueLengthLimit: q.queueLengthLimit ?? 50,
  };
}
