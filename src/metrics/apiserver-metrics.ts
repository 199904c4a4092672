/**
 * The metrics the server exposes at /metrics: the request metrics (recorded on the front
 * thread's hot path, see request-metrics.ts) and gauges computed at scrape time (in-flight
 * requests, stored objects, requested deprecated APIs).
 */
import { CollectedFamily, MetricsRegistry, labelPairs, type Family, type MetricsVersion } from './registry.js';
import { RequestMetrics, type MetricResource } from './request-metrics.js';
import { RELEASE_STRING } from '../api/release.js';

export const METRICS_VERSION = RELEASE_STRING;

/** What the scrape-time gauges read from the server. */
export interface MetricsSources {
  /** in-flight requests now and the highest count since the previous call */
  inflight(): { readOnly: number; mutating: number };
  /** stored object counts by upstream's resource label (`pods`, `deployments.apps`) */
  storageObjects(): Iterable<[string, number]>;
  /** feature gates: name, stage and whether enabled */
  featureGates(): Iterable<[string, string, boolean]>;
  /** audit events written and lost, when auditing is on */
  audit?(): [number, number];
}

const DEPRECATED_LABELS = ['group', 'version', 'resource', 'subresource', 'removed_release'] as const;

/** apiserver_requested_deprecated_apis: one series per deprecated resource requested, set to 1. */
export class DeprecatedApis {
  private readonly seen = new Map<MetricResource, Map<string, string>>();

  /** Called for requests to a deprecated resource; cheap after the first request. */
  requested(def: MetricResource, subresource: string, removedRelease: string): void {
    let subs = this.seen.get(def);
    if (!subs) this.seen.set(def, (subs = new Map()));
    if (!subs.has(subresource))
      subs.set(
        subresource,
        labelPairs(DEPRECATED_LABELS, [def.group, def.version, def.resource, subresource, removedRelease]),
      );
  }

  family(): Family {
    const seen = this.seen;
    return {
      opts: {
        name: 'apiserver_requested_deprecated_apis',
        stability: 'STABLE',
        help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      },
      type: 'gauge',
      samples(out) {
        for (const subs of seen.values())
          for (const labels of subs.values()) out.push(`apiserver_requested_deprecated_apis{${labels}} 1`);
      },
    };
  }
}

export class ApiServerMetrics {
  readonly registry: MetricsRegistry;
  readonly requests = new RequestMetrics();
  readonly deprecated = new DeprecatedApis();

  constructor(sources: MetricsSources, showHiddenFor?: string) {
    const version: MetricsVersion = { current: METRICS_VERSION, ...(showHiddenFor ? { showHiddenFor } : {}) };
    this.registry = new MetricsRegistry(version);
    for (const f of this.requests.families()) this.registry.register(f);
    this.registry.register(this.deprecated.family());
    this.registry.register(
      new CollectedFamily(
        {
          name: 'apiserver_current_inflight_requests',
          stability: 'STABLE',
          help: 'Maximal number of currently used inflight request limitation of this apiserver per request kind in last second.',
        },
        'gauge',
        ['request_kind'],
        () => {
          const c = sources.inflight();
          return [
            [['mutating'], c.mutating],
            [['readOnly'], c.readOnly],
          ];
        },
      ),
    );
    this.registry.register(
      new CollectedFamily(
        {
          name: 'apiserver_storage_objects',
          stability: 'STABLE',
          help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
        },
        'gauge',
        ['resource'],
        () => [...sources.storageObjects()].map(([r, n]) => [[r], n] as [string[], number]),
      ),
    );
    this.registerFeatureGates(sources);
    this.registerAudit(sources);
  }

  /** The audit counters, when auditing is on. */
  private registerAudit(sources: MetricsSources): void {
    const audit = sources.audit;
    if (!audit) return;
    this.registry.register(
      new CollectedFamily(
        {
          name: 'apiserver_audit_event_total',
          stability: 'ALPHA',
          help: 'Counter of audit events generated and sent to the audit backend.',
        },
        'counter',
        [],
        () => [[[], audit()[0]]],
      ),
    );
    this.registry.register(
      new CollectedFamily(
        {
          name: 'apiserver_audit_error_total',
          stability: 'ALPHA',
          help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
        },
        'counter',
        ['plugin'],
        () => [[['log'], audit()[1]]],
      ),
    );
  }

  private registerFeatureGates(sources: MetricsSources): void {
    this.registry.register(
      new CollectedFamily(
        {
          name: 'platform_feature_enabled',
          stability: 'BETA',
          help: 'This metric records the data about the stage and enablement of a platform feature.',
        },
        'gauge',
        ['name', 'stage'],
        () => [...sources.featureGates()].map(([name, stage, on]) => [[name, stage], on ? 1 : 0] as [string[], number]),
      ),
    );
  }

  render(): string {
    return this.registry.render();
  }
}
