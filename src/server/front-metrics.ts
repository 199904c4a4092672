/**
 * The front thread's side of the metrics: resolves each request's series once (when its
 * resource is known) and records the response when it starts (or, for a watch, ends), as
 * upstream's MonitorRequest. Requests rejected before dispatch (authentication, authorization)
 * resolve their series only then, off the hot path.
 */
import { performance } from 'node:perf_hooks';
import { ApiServerMetrics, type MetricsSources } from '../metrics/apiserver-metrics.js';
import { CollectedFamily } from '../metrics/registry.js';
import { yamlEncodings, yamlEncodingsInProgress } from '../http/yaml-reply.js';
import { REPORTED_VERBS, type Scope, type Series } from '../metrics/request-metrics.js';
import type { Registry } from '../registry/registry.js';
import { FEATURE_GATES } from '../api/feature-gates.js';
import type { ResourceDef } from '../registry/types.js';
import type { Exchange, ResponseObserver } from '../http/exchange.js';
import { parseRequestInfo, type RequestInfo } from '../http/request-info.js';

/** Upstream reports these subresources with the verb CONNECT. */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);
/** Methods reported as themselves; any other is `other` (upstream), so labels stay bounded. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);
/** Health endpoints are instrumented without a component (upstream). */
const HEALTH = /^\/(livez|readyz|healthz)(\/|$)/;

/** A non-resource request whose series waits for its status code. */
class PathRef {
  constructor(
    readonly verb: string,
    readonly path: string,
    readonly component: string,
  ) {}
}

export class FrontMetrics implements ResponseObserver {
  readonly metrics: ApiServerMetrics;

  constructor(
    private readonly registry: Registry,
    sources: MetricsSources,
    showHiddenFor?: string,
  ) {
    this.metrics = new ApiServerMetrics(sources, showHiddenFor);
    this.metrics.registry.register(
      new CollectedFamily(
        {
          name: 'platform_response_encodings_total',
          stability: 'ALPHA',
          help: 'Responses encoded on the encoding thread (YAML), by how the encoding ended: completed, timeout (the request deadline passed), cancelled (the client left) or error.',
        },
        'counter',
        ['format', 'outcome'],
        () =>
          (['completed', 'timeout', 'cancelled', 'error'] as const).map(
            (o) => [['yaml', o], yamlEncodings[o]] as [string[], number],
          ),
      ),
    );
    this.metrics.registry.register(
      new CollectedFamily(
        {
          name: 'platform_response_encoded_values_total',
          stability: 'ALPHA',
          help: 'Values (collection entries) written by the response encoding thread.',
        },
        'counter',
        ['format'],
        () => [[['yaml'], yamlEncodings.values]],
      ),
    );
    this.metrics.registry.register(
      new CollectedFamily(
        {
          name: 'platform_response_encodings_in_progress',
          stability: 'ALPHA',
          help: 'Response encodings started on the encoding thread that have not yet finished or stopped.',
        },
        'gauge',
        ['format'],
        () => [[['yaml'], yamlEncodingsInProgress()]],
      ),
    );
  }

  /** Called as the request arrives: starts its clock. */
  begin(x: Exchange): void {
    x.observer = this;
    x.start = performance.now();
  }

  /**
   * A resource request whose served definition is known (the hot path: Map lookups only). A
   * subresource the resource does not have is answered 404 and counted as an unknown resource
   * request, so that request paths never become label values.
   */
  resource(
    x: Exchange,
    info: RequestInfo,
    def: ResourceDef,
    query: URLSearchParams,
    contentType: string | undefined,
  ): void {
    const sub = info.subresource;
    if (sub !== '' && !def.subresources.some((s) => s.name === sub))
      return this.nonResource(x, x.request?.method ?? 'GET', '', true);
    x.series = this.metrics.requests.resource(
      def,
      reportedVerb(info, contentType),
      sub,
      scopeOf(info),
      cleanDryRun(query),
    );
  }

  /**
   * A non-resource path (discovery, health, /metrics, ...) or an unserved resource. A path's
   * series is chosen when the answer starts: a path that is not served (404) is not a label
   * value (upstream does not count unrouted paths at all), so hostile paths cannot grow the
   * exposition.
   */
  nonResource(x: Exchange, method: string, path: string, resourceRequest: boolean): void {
    const verb = method === 'HEAD' ? 'GET' : METHODS.has(method) ? method : 'other';
    x.series = resourceRequest
      ? this.metrics.requests.nonResource(verb, '', 'apiserver')
      : new PathRef(verb, path, HEALTH.test(path) ? '' : 'apiserver');
  }

  /** told of every response (the `-v=3` request log, src/server/request-log.ts); unset: no cost */
  onResponse: ((x: Exchange, code: number, bytes: number) => void) | undefined;

  responded(x: Exchange, code: number, bytes = 0): void {
    this.onResponse?.(x, code, bytes);
    const s = this.seriesOf(x, code);
    if (s && x.start !== undefined) s.observe(code, (performance.now() - x.start) / 1000);
  }

  streamOpened(x: Exchange): void {
    const s = this.seriesOf(x, 200);
    if (s) s.longRunning++;
  }

  /** A watch is counted (code 200) when it ends, as upstream records it after the handler returns. */
  streamClosed(x: Exchange): void {
    const s = x.series as Series | undefined;
    if (!s) return;
    s.longRunning--;
    this.responded(x, 200);
  }

  render(): string {
    return this.metrics.render();
  }

  private seriesOf(x: Exchange, code: number): Series | undefined {
    const s = x.series;
    if (s instanceof PathRef)
      return (x.series = this.metrics.requests.nonResource(s.verb, code === 404 ? '' : s.path, s.component));
    if (s === undefined) return this.late(x, code);
    return s as Series;
  }

  /** Resolves the series of a request answered before dispatch (rare: rejections). */
  private late(x: Exchange, code: number): Series | undefined {
    const p = x.request;
    if (!p) return undefined;
    const info = parseRequestInfo(p.method, p.path, p.query);
    const def = info.isResourceRequest
      ? this.registry.lookup(info.apiGroup, info.apiVersion, info.resource)
      : undefined;
    if (def) this.resource(x, info, def, p.query, undefined);
    else this.nonResource(x, p.method, p.path, info.isResourceRequest);
    return x.series === undefined ? undefined : this.seriesOf(x, code);
  }
}

function reportedVerb(info: RequestInfo, contentType: string | undefined): string {
  if (CONNECT.has(info.subresource)) return 'CONNECT';
  if (info.verb === 'patch' && contentType?.startsWith('application/apply-patch')) return 'APPLY';
  return REPORTED_VERBS[info.verb] ?? 'other';
}

/** upstream CleanScope */
function scopeOf(info: RequestInfo): Scope {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  return info.namespace !== '' ? 'namespace' : 'cluster';
}

/** upstream cleanDryRun: the sorted distinct values, or "invalid" */
function cleanDryRun(query: URLSearchParams): '' | 'All' | 'invalid' {
  if (!query.has('dryRun')) return '';
  return query.getAll('dryRun').every((v) => v === 'All') ? 'All' : 'invalid';
}

/** `pods`, `deployments.apps`: upstream's resource label of apiserver_storage_objects. */
export function storageObjectSources(
  registry: Registry,
  count: (typeKey: string) => number,
): MetricsSources['storageObjects'] {
  // rebuilt when the served set changes (custom resources come and go)
  let generation = -1;
  let types: [string, string][] = [];
  const build = (): void => {
    const seen = new Set<string>();
    types = [];
    for (const d of registry.allEnabled()) {
      const typeKey = `${d.group}/${d.resource}`;
      if (seen.has(typeKey) || !d.verbs.includes('get') || !d.verbs.includes('create')) continue;
      seen.add(typeKey);
      types.push([typeKey, d.group ? `${d.resource}.${d.group}` : d.resource]);
    }
    types.sort((a, b) => (a[1] < b[1] ? -1 : 1));
    generation = registry.generation;
  };
  return function* () {
    if (generation !== registry.generation) build();
    for (const [typeKey, label] of types) yield [label, count(typeKey)];
  };
}

/** name, stage (empty for GA, as upstream) and effective value of every known gate, by name. */
export function featureGateSource(gates: Record<string, boolean>): MetricsSources['featureGates'] {
  const known = Object.entries(FEATURE_GATES).sort(([a], [b]) => (a < b ? -1 : 1));
  return () => known.map(([name, g]) => [name, g.stage === 'GA' ? '' : g.stage, gates[name] === true]);
}
