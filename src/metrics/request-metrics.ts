/**
 * The request metrics of the front thread: apiserver_request_total, the
 * apiserver_request_duration_seconds histogram and apiserver_longrunning_requests.
 *
 * Hot path: a request resolves its Series once (three Map lookups keyed by the resource's
 * definition object, the reported verb and the subresource; no string is built) and, when its
 * response starts, bumps a per-code counter and one histogram bucket. Label text is built once
 * per series, when the series is created; the exposition text only at scrape time.
 */
import type { Family, MetricOpts } from './registry.js';
import { labelPairs } from './registry.js';
import { Histogram } from './histogram.js';

/** Upstream's apiserver_request_duration_seconds buckets (seconds). */
export const DURATION_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

const REQUEST_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
] as const;
const LONGRUNNING_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

/** One label combination (without code) of the request metrics. */
export class Series {
  /** `component="apiserver",dry_run="",...,version="v1"` (sorted; `code` sorts before all of them) */
  readonly labels: string;
  readonly longRunningLabels: string;
  readonly codes = new Map<number, number>();
  readonly duration = new Histogram(DURATION_BUCKETS);
  longRunning = 0;
  /** the reported verb (WATCH series are listed in the long-running gauge even at 0) */
  readonly verb: string;

  constructor(values: Record<(typeof REQUEST_LABELS)[number], string>) {
    this.verb = values.verb;
    this.labels = labelPairs(
      REQUEST_LABELS,
      REQUEST_LABELS.map((k) => values[k]),
    );
    this.longRunningLabels = labelPairs(
      LONGRUNNING_LABELS,
      LONGRUNNING_LABELS.map((k) => values[k]),
    );
  }

  observe(code: number, seconds: number): void {
    this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
    this.duration.observe(seconds);
  }
}

/** The resource a request addresses, as far as the metrics need it. */
export interface MetricResource {
  group: string;
  version: string;
  resource: string;
}

export type Scope = 'resource' | 'namespace' | 'cluster';
const SCOPES: readonly Scope[] = ['resource', 'namespace', 'cluster'];
const DRY_RUNS = ['', 'All', 'invalid'] as const;
/** Bound on distinct non-resource paths kept as their own series per method (the rest share one). */
const MAX_PATHS = 100;
/** A longer path is never a label (the series would repeat it in every bucket line). */
export const MAX_PATH_LABEL = 256;

/** Upstream's reported verbs: uppercase, LIST/WATCH split from GET, APPLY split from PATCH. */
export const REPORTED_VERBS: Record<string, string> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
};

const HELP = {
  total:
    'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
  duration:
    'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
  longRunning:
    'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
};

export class RequestMetrics {
  /** by definition object (the hot path); a custom resource's definition is rebuilt whenever the
   *  served set changes, so a miss falls back to the group/version/resource key and its series */
  private readonly byResource = new WeakMap<MetricResource, Map<string, Map<string, Series[]>>>();
  private readonly byGvr = new Map<string, Map<string, Map<string, Series[]>>>();
  private readonly byPath = new Map<string, Map<string, Series>>();
  private readonly all: Series[] = [];

  /** The series of a resource request; dryRun is upstream's cleaned value ('', 'All', 'invalid'). */
  resource(
    def: MetricResource,
    verb: string,
    subresource: string,
    scope: Scope,
    dryRun: '' | 'All' | 'invalid',
  ): Series {
    let verbs = this.byResource.get(def);
    if (!verbs) {
      const key = `${def.group}/${def.version}/${def.resource}`;
      verbs = this.byGvr.get(key);
      if (!verbs) this.byGvr.set(key, (verbs = new Map()));
      this.byResource.set(def, verbs);
    }
    let subs = verbs.get(verb);
    if (!subs) verbs.set(verb, (subs = new Map()));
    let slots = subs.get(subresource);
    if (!slots) subs.set(subresource, (slots = []));
    const i = SCOPES.indexOf(scope) * 3 + DRY_RUNS.indexOf(dryRun);
    return (slots[i] ??= this.add({
      verb,
      dry_run: dryRun,
      group: def.group,
      version: def.version,
      resource: def.resource,
      subresource,
      scope,
      component: 'apiserver',
    }));
  }

  /**
   * The series of a request that addresses no served resource: non-resource paths carry the
   * path as subresource (upstream), bounded; an unknown resource request carries no labels.
   */
  nonResource(method: string, path: string, component: string): Series {
    let paths = this.byPath.get(method);
    if (!paths) this.byPath.set(method, (paths = new Map()));
    const key = path.length <= MAX_PATH_LABEL && (paths.has(path) || paths.size < MAX_PATHS) ? path : '';
    let s = paths.get(key);
    if (!s)
      paths.set(
        key,
        (s = this.add({
          verb: method,
          dry_run: '',
          group: '',
          version: '',
          resource: '',
          subresource: key,
          scope: '',
          component,
        })),
      );
    return s;
  }

  private add(values: ConstructorParameters<typeof Series>[0]): Series {
    const s = new Series(values);
    this.all.push(s);
    return s;
  }

  /** The three families, for a MetricsRegistry. */
  families(): Family[] {
    const all = this.all;
    const total: Family = {
      opts: { name: 'apiserver_request_total', help: HELP.total, stability: 'STABLE' },
      type: 'counter',
      samples(out) {
        for (const s of all)
          for (const [code, n] of s.codes) out.push(`apiserver_request_total{code="${code}",${s.labels}} ${n}`);
      },
    };
    const duration: Family = {
      opts: { name: 'apiserver_request_duration_seconds', help: HELP.duration, stability: 'STABLE' },
      type: 'histogram',
      samples(out) {
        const n = 'apiserver_request_duration_seconds';
        for (const s of all) if (s.duration.count > 0) s.duration.lines(n, s.labels, out);
      },
    };
    const longRunning: Family = {
      opts: {
        name: 'apiserver_longrunning_requests',
        help: HELP.longRunning,
        stability: 'STABLE',
      } satisfies MetricOpts,
      type: 'gauge',
      samples(out) {
        for (const s of all)
          if (s.verb === 'WATCH' || s.longRunning)
            out.push(`apiserver_longrunning_requests{${s.longRunningLabels}} ${s.longRunning}`);
      },
    };
    return [total, duration, longRunning];
  }
}
