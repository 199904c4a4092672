/**
 * API Priority and Fairness on the front thread: the FlowSchemas and PriorityLevelConfigurations
 * (kept current from change events) classify each authenticated request into a flow and a
 * priority level, and the dispatcher decides when it runs. Answers name the matched objects in
 * the `X-<Product>-PF-FlowSchema-UID` / `-PriorityLevel-UID` headers; rejections are 429 with
 * Retry-After. Counters feed the `apiserver_flowcontrol_*` metrics.
 */
import type { CachedObject, ChangeEvent } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import { typeKeyOf } from '../actors/routing.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { FlowSchema, PriorityLevelConfiguration } from '../api/kinds.js';
import type { Stored } from '../api/object.js';
import type { UserInfo } from '../api/user.js';
import type { RequestInfo } from '../http/request-info.js';
import { Dispatcher, flowHash, type LevelConfig, type RejectReason } from './dispatcher.js';
import { compileSchema, flowDistinguisher, flowKey, orderSchemas, type CompiledSchema } from './matching.js';
import { estimateWork, type Counts } from './work-estimate.js';
import { ApfMetrics, type FlowStats } from './apf-metrics.js';

export interface Classification {
  schema: CompiledSchema;
  level: LevelConfig | undefined;
  /** the flow key; '' in a level without queues (exempt, or Reject), where no hand is dealt */
  flow: string;
  /** the response headers naming the schema and the level (shared: never modified) */
  headers: readonly [readonly [string, string], readonly [string, string]];
  /** the flow's metrics, filled by the first admission of the schema and level (shared by their requests) */
  slot: { stats?: FlowStats };
  /** flowHash(flow), 0 for no flow */
  hash: number;
}

/** How many flows of one route keep their classification (cleared when full: a bound against many users or namespaces). */
const MAX_FLOWS = 4096;

/** A schema whose level exists, with what each of its requests shares (built at each configuration). */
interface Route {
  schema: CompiledSchema;
  level: LevelConfig;
  /** whether the level deals its flows a hand of queues (so the flow key is needed) */
  queued: boolean;
  /** the classification of every request of an unqueued level (no per-request flow) */
  shared: Classification;
  /** a queued level's classifications by flow distinguisher (user name, namespace or ''), made once each */
  flows: Map<string, Classification>;
}

export class PriorityAndFairness implements Informer {
  readonly dispatcher: Dispatcher;
  readonly schemaKey: string;
  readonly levelKey: string;
  readonly headers: { schema: string; level: string };
  private readonly schemaObjs = new Map<string, Stored<FlowSchema>>();
  private readonly levelObjs = new Map<string, Stored<PriorityLevelConfiguration>>();
  /** the schemas in matching order, with their levels; dangling ones skipped, as upstream */
  private routes: Route[] = [];
  private levelConfigs = new Map<string, LevelConfig>();
  private dirty = false;
  readonly metrics = new ApfMetrics();
  /** called after each configuration change (status writer, mandatory objects) */
  onConfigChange?: () => void;
  /** stored objects and watchers of a resource, for the work estimates (set by the server) */
  counts: Counts = { objects: () => 0, watchers: () => 0 };

  constructor(
    identity: Identity,
    readonly serverLimit: number,
    maxWaitMs: number,
  ) {
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
    const schemas = orderSchemas([...this.schemaObjs.values()].map(compileSchema));
    this.levelConfigs = new Map([...this.levelObjs.values()].map((o) => [o.metadata.name, levelConfig(o)]));
    this.routes = [];
    for (const schema of schemas) {
      const level = this.levelConfigs.get(schema.level);
      if (!level) continue;
      const headers = [
        [this.headers.schema, schema.uid],
        [this.headers.level, level.uid],
      ] as const;
      const shared: Classification = { schema, level, flow: '', headers, slot: {}, hash: 0 };
      this.routes.push({ schema, level, queued: !level.exempt && !level.reject, shared, flows: new Map() });
    }
    this.dispatcher.configure([...this.levelConfigs.values()]);
    this.onConfigChange?.();
  }

  flowSchemas(): readonly Stored<FlowSchema>[] {
    return [...this.schemaObjs.values()];
  }
  priorityLevels(): ReadonlyMap<string, Stored<PriorityLevelConfiguration>> {
    return this.levelObjs;
  }

  /** The first matching schema whose priority level exists (upstream skips dangling ones). */
  classify(user: UserInfo, info: RequestInfo): Classification | undefined {
    for (const route of this.routes) {
      if (!route.schema.matches(user, info)) continue;
      // hot path: a level without queues never deals a hand, so its requests share one classification
      if (!route.queued) return route.shared;
      return this.flowOf(route, user, info);
    }
    return undefined;
  }

  /** A queued level's classification of the request's flow: the same object (and hash) for every request of the flow. */
  private flowOf(route: Route, user: UserInfo, info: RequestInfo): Classification {
    const d = flowDistinguisher(route.schema, user, info);
    let c = route.flows.get(d);
    if (!c) {
      if (route.flows.size >= MAX_FLOWS) route.flows.clear();
      const flow = flowKey(route.schema, user, info);
      const { schema, level, headers, slot } = route.shared;
      route.flows.set(d, (c = { schema, level, flow, headers, slot, hash: flowHash(flow) }));
    }
    return c;
  }

  /** The flow's metrics: looked up once per route, not per request. */
  private statsOf(c: Classification): FlowStats {
    return (c.slot.stats ??= this.metrics.flow(c.schema.name, c.level!.name));
  }

  /**
   * The release of a classified request that runs at once (see Dispatcher.acquireNow), its
   * metrics counted as admit counts them; undefined when it must go through admit.
   */
  admitNow(c: Classification, info: RequestInfo, query: URLSearchParams): (() => void) | undefined {
    const level = c.level!.name;
    const work = estimateWork(info, query, this.counts, this.dispatcher.levels.get(level)?.maxSeats ?? 1);
    const arrived = performance.now();
    const release = this.dispatcher.acquireNow(level, c.hash, work);
    if (!release) return undefined;
    const seats = Math.max(work.initialSeats, work.finalSeats);
    const flow = this.statsOf(c);
    flow.seats.observe(seats);
    flow.waitExecuted.observe((performance.now() - arrived) / 1000);
    flow.dispatched++;
    flow.executing++;
    flow.executingSeats += seats;
    return seatRelease(flow, seats, release);
  }

  /**
   * Admits a classified request: `go(release)` when it may run (release once it is answered),
   * `refuse(reason)` when it is rejected. Returns a cancel function while it waits in a queue.
   */
  admit(
    c: Classification,
    info: RequestInfo,
    query: URLSearchParams,
    go: (release: () => void) => void,
    refuse: (reason: RejectReason) => void,
  ): (() => void) | undefined {
    const level = c.level!.name;
    const flow = this.statsOf(c);
    const work = estimateWork(info, query, this.counts, this.dispatcher.levels.get(level)?.maxSeats ?? 1);
    const seats = Math.max(work.initialSeats, work.finalSeats);
    flow.seats.observe(seats);
    const arrived = performance.now();
    let queued = false;
    const cancel = this.dispatcher.admit(
      level,
      c.hash,
      (release) => {
        if (queued) flow.waiting--;
        flow.waitExecuted.observe((performance.now() - arrived) / 1000);
        flow.dispatched++;
        flow.executing++;
        flow.executingSeats += seats;
        go(seatRelease(flow, seats, release));
      },
      (reason) => {
        if (queued) flow.waiting--;
        flow.waitRejected.observe((performance.now() - arrived) / 1000);
        flow.rejected.set(reason, (flow.rejected.get(reason) ?? 0) + 1);
        refuse(reason);
      },
      work,
    );
    if (cancel) {
      queued = true;
      flow.waiting++;
      flow.queueLength.observe(this.dispatcher.lastQueueLength);
    }
    return cancel;
  }

  /** Prometheus text of the `apiserver_flowcontrol_*` families. */
  metricsText(): string {
    return this.metrics.render(this.dispatcher.levels);
  }
}

/** A request's release: counts it out of its flow once, then gives its seats back. */
function seatRelease(flow: FlowStats, seats: number, release: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    flow.executing--;
    flow.executingSeats -= seats;
    release();
  };
}

export function levelConfig(o: Stored<PriorityLevelConfiguration>): LevelConfig {
  const spec = o.spec ?? {};
  const exempt = spec.type === 'Exempt';
  const limited = spec.limited ?? {};
  const lr = limited.limitResponse ?? {};
  const q = lr.queuing ?? {};
  return {
    name: o.metadata.name,
    uid: o.metadata.uid ?? '',
    exempt,
    shares: exempt ? (spec.exempt?.nominalConcurrencyShares ?? 0) : (limited.nominalConcurrencyShares ?? 30),
    lendablePercent: exempt ? 0 : (limited.lendablePercent ?? 0),
    borrowingLimitPercent: limited.borrowingLimitPercent ?? undefined,
    reject: lr.type === 'Reject',
    queues: q.queues ?? 64,
    handSize: q.handSize ?? 8,
    queueLengthLimit: q.queueLengthLimit ?? 50,
  };
}
