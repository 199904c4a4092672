/** Non-resource paths: discovery, OpenAPI, version and health, answered on the front thread. */
import { errors, toStatus } from '../api/status.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from '../registry/discovery.js';
import { openapiV2, openapiV3Doc, openapiV3Index } from '../registry/openapi-documents.js';
import { send, sendStatus, type Exchange } from '../http/exchange.js';
import { negotiate, parseAccept, prettyRequested } from '../http/negotiation.js';
import { runChecks, type HealthCheck } from '../http/health.js';
import type { RequestInfo } from '../http/request-info.js';
import type { RequestHeaders } from '../http/context.js';
import type { Registry } from '../registry/registry.js';
import type { ActorPool } from '../actors/pool.js';
import { toYaml as yaml } from '../codec/yaml-encoder.js';
import { remoteAggregatedItems, remoteApiGroup, remoteGroupEntries } from '../aggregator/discovery.js';
import { processMetricsText } from '../metrics/process-metrics.js';
import { VERSION_INFO } from '../api/release.js';
import { createHash } from 'node:crypto';
import { encodeOpenAPIV2, OPENAPI_V2_PROTOBUF } from '../api/openapi-v2-protobuf.js';

export { VERSION_INFO };

const AGGREGATED = 'APIGroupDiscoveryList';

/** What the non-resource paths read of the server (src/server/server.ts's ApiServer is one). */
export interface NonResourceHost {
  readonly registry: Registry;
  readonly pool: Pick<ActorPool, 'restarting' | 'submit'>;
  readonly etcdHealth: { run(): Promise<string | undefined> } | undefined;
  readonly started: boolean;
  readonly shuttingDown: boolean;
  readonly options: { readonly bindAddress: string; readonly insecureBindAddress: string };
  readonly port: number;
  readonly securePort: number | undefined;
  readonly apf: { metricsText(): string } | undefined;
  readonly metrics: { render(): string };
  readonly extensions: { readonly apiServices: Parameters<typeof remoteGroupEntries>[0] };
}

/** A shard whose actor died and is being restarted from its store (see ActorPool). */
async function shardsDown(server: NonResourceHost): Promise<string | undefined> {
  const down = server.pool.restarting();
  return down.length ? `shard actors restarting: ${down.join(', ')}` : undefined;
}

function healthChecks(server: NonResourceHost, endpoint: string): HealthCheck[] {
  const ok = async () => undefined;
  const checks: HealthCheck[] = [
    { name: 'ping', run: ok },
    { name: 'log', run: ok },
    ...(server.etcdHealth ? [{ name: 'etcd', run: server.etcdHealth.run }] : []),
    {
      name: 'backing-store',
      run: async () => {
        const r = await server.pool.submit({
          op: 'get',
          type: { group: '', version: 'v1', resource: 'namespaces' },
          enc: { format: 'json', pretty: false },
          namespace: '',
          name: 'default',
        });
        return 'error' in r && r.error.code !== 404 ? r.error.message : undefined;
      },
    },
    { name: 'poststarthook/start-shard-actors', run: async () => (server.started ? undefined : 'not finished') },
    ...(endpoint === 'readyz' ? [{ name: 'shard-actors', run: async () => shardsDown(server) }] : []),
    { name: 'poststarthook/bootstrap-namespaces', run: async () => (server.started ? undefined : 'not finished') },
  ];
  if (endpoint === 'readyz')
    checks.push({ name: 'shutdown', run: async () => (server.shuttingDown ? 'process is shutting down' : undefined) });
  return checks;
}

const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** /metrics: the server's families, then APF's, then the process's. */
function metricsText(server: NonResourceHost): string {
  return server.metrics.render() + (server.apf?.metricsText() ?? '') + processMetricsText();
}

/** What GET / lists (upstream's root path list, sorted). */
const ROOT_PATHS = [
  '/api',
  '/api/v1',
  '/apis',
  '/healthz',
  '/livez',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/readyz',
  '/version',
];

/**
 * A discovery or other JSON document as negotiated: JSON, pretty JSON or YAML; for /api and /apis
 * (discoveryGroup set) also the aggregated form, with its ETag (304 when the client has it).
 */
function sendJson(
  x: Exchange,
  headers: RequestHeaders,
  pretty: boolean,
  v: unknown,
  discoveryGroup: string | undefined,
): void {
  const enc = negotiate(headers.accept, pretty, {
    canServe: (m, f) =>
      f === 'json' &&
      m.params.as === AGGREGATED &&
      discoveryGroup !== undefined &&
      m.params.g === discoveryGroup &&
      m.params.v === 'v2',
  });
  const ct = enc.as
    ? `application/json;g=${enc.as.params.g};v=${enc.as.params.v};as=${AGGREGATED}`
    : enc.format === 'yaml'
      ? 'application/yaml'
      : 'application/json';
  const compact = enc.format === 'yaml' || enc.pretty ? undefined : JSON.stringify(v);
  if (enc.as && discoveryNotModified(x, headers, compact ?? JSON.stringify(v))) return send(x, 304, ct, '');
  // as upstream's serializer: json.Encoder ends the line, MarshalIndent (pretty) does not
  const body = enc.format === 'yaml' ? yaml(v) : compact === undefined ? JSON.stringify(v, null, 2) : compact + '\n';
  send(x, 200, ct, body);
}

/** The address /api advertises: the secure port as upstream, else the plain one. */
function advertised(server: NonResourceHost): string {
  return server.securePort !== undefined
    ? `${server.options.bindAddress}:${server.securePort}`
    : `${server.options.insecureBindAddress}:${server.port}`;
}

export function handleNonResource(
  server: NonResourceHost,
  x: Exchange,
  method: string,
  path: string,
  query: URLSearchParams,
  headers: RequestHeaders,
  info: RequestInfo,
): void {
  const pretty = prettyRequested(query, headers.userAgent);
  const segs = path.split('/').filter(Boolean);
  const health = segs[0];
  if ((health === 'livez' || health === 'readyz' || health === 'healthz') && segs.length <= 2) {
    runChecks(health, healthChecks(server, health), query, segs[1]).then(
      (r) => send(x, r.code, 'text/plain; charset=utf-8', r.body),
      (e) => sendStatus(x, toStatus(e)),
    );
    return;
  }
  if (method !== 'GET' && method !== 'HEAD')
    throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
  const json = (v: unknown) => sendJson(x, headers, pretty, v, isDiscoveryDoc ? discoveryGroup : undefined);
  // upstream WriteRawJSON (/version, the root path list): always indented, no trailing newline
  const rawJson = (v: unknown) => send(x, 200, 'application/json', JSON.stringify(v, null, 2));
  // kube-openapi serves the marshalled document as is: never indented, no trailing newline
  // (an Accept the server cannot serve is still a 406)
  const openapi = (v: unknown) => {
    negotiate(headers.accept, false);
    send(x, 200, 'application/json', JSON.stringify(v));
  };
  const reg = server.registry;
  const discoveryGroup = `apidiscovery.${reg.identity.domain}`;
  const isDiscoveryDoc = (segs[0] === 'api' || segs[0] === 'apis') && segs.length === 1;
  const wantsAggregated =
    isDiscoveryDoc &&
    negotiate(headers.accept, false, {
      canServe: (m, f) =>
        f === 'json' && m.params.as === AGGREGATED && m.params.g === discoveryGroup && m.params.v === 'v2',
    }).as !== undefined;
  if (path === '/version' || path === '/version/') return rawJson(VERSION_INFO);
  if (path === '/metrics') return send(x, 200, METRICS_CONTENT_TYPE, metricsText(server));
  if (segs[0] === 'api' && segs.length === 1)
    return json(wantsAggregated ? aggregatedDiscovery(reg, true) : apiVersions(advertised(server)));
  if (segs[0] === 'apis' && segs.length === 1) return json(withRemoteGroups(server, wantsAggregated));
  if (segs[0] === 'api' && segs.length === 2) return found(json, apiResourceList(reg, '', segs[1]!));
  if (segs[0] === 'apis' && segs.length === 2)
    return found(json, apiGroup(reg, segs[1]!) ?? remoteApiGroup(server.extensions.apiServices, segs[1]!));
  if (segs[0] === 'apis' && segs.length === 3) return found(json, apiResourceList(reg, segs[1]!, segs[2]!));
  if (path === '/openapi/v2') return serveOpenAPIV2(x, headers, openapiV2(reg));
  if (path === '/openapi/v3' || path === '/openapi/v3/') return openapi(openapiV3Index(reg));
  if (segs[0] === 'openapi' && segs[1] === 'v3') return found(openapi, openapiV3Doc(reg, segs.slice(2).join('/')));
  if (path === '/') return rawJson({ paths: ROOT_PATHS });
  void info;
  throw errors.notFoundMessage('the server could not find the requested resource');
}

/** /apis with the groups of remote APIServices after the built-in ones (src/aggregator/discovery.ts). */
function withRemoteGroups(server: NonResourceHost, aggregated: boolean): unknown {
  const reg = server.registry;
  if (aggregated) {
    const doc = aggregatedDiscovery(reg, false);
    const extra = remoteAggregatedItems(server.extensions.apiServices);
    return extra.length ? { ...doc, items: [...doc.items, ...extra] } : doc;
  }
  const list = apiGroupList(reg);
  const extra = remoteGroupEntries(server.extensions.apiServices);
  return extra.length ? { ...list, groups: [...list.groups, ...extra] } : list;
}

/**
 * Aggregated discovery's cache validators, as upstream's ServeHTTPWithETag: `ETag` (the quoted
 * upper-case hex SHA-512 of the document's compact JSON, so it changes with every served
 * resource, a CRD deleted and re-created with another scope included), `Vary: Accept`,
 * `Cache-Control: public`; true (answer 304, no body) when If-None-Match is exactly that ETag.
 * kubectl's HTTP cache revalidates /api and /apis with it.
 */
function discoveryNotModified(x: Exchange, headers: RequestHeaders, compactJson: string): boolean {
  const etag = `"${createHash('sha512').update(compactJson).digest('hex').toUpperCase()}"`;
  x.headers.push(['Etag', etag], ['Vary', 'Accept'], ['Cache-Control', 'public']);
  return headers.ifNoneMatch === etag;
}

function found(json: (v: unknown) => void, v: unknown): void {
  if (v === undefined) throw errors.notFoundMessage('the server could not find the requested resource');
  json(v);
}

/*
 * GET /openapi/v2 as kube-openapi serves it: JSON or gnostic Protobuf by Accept (the first
 * acceptable range in q order; `*` matches JSON first; nothing acceptable is a bare 406),
 * `Vary: Accept`, and an ETag (SHA-512 of the JSON bytes, upper-case hex, quoted) shared by
 * both encodings, answered with 304 when If-None-Match names it. Both bodies are built once
 * per document (the document object changes only when the served set does).
 */
interface Encoded {
  json: string;
  etag: string;
  protobuf?: Uint8Array;
}

const encoded = new WeakMap<object, Encoded>();

function encodingsOf(doc: Record<string, unknown>): Encoded {
  let e = encoded.get(doc);
  if (!e) {
    const json = JSON.stringify(doc);
    e = { json, etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"` };
    encoded.set(doc, e);
  }
  return e;
}

/**
 * The Content-Type of a Protobuf reply: kube-openapi answers the requested type with `.` for
 * `@` (a media type token cannot hold `@`; Go's mime parser, hence client-go, refuses it).
 */
export const OPENAPI_V2_PROTOBUF_RETURNED = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** [type, subtype] → the served media type, in kube-openapi's preference order. */
const OFFERED: [string, string, string][] = [
  ['application', 'json', 'application/json'],
  ['application', OPENAPI_V2_PROTOBUF.slice('application/'.length), OPENAPI_V2_PROTOBUF_RETURNED],
];

function chosen(accept: string | undefined): string | undefined {
  for (const range of parseAccept(accept || '*/*')) {
    const [type, sub = ''] = range.type.split('/');
    const hit = OFFERED.find(([t, s]) => (type === t || type === '*') && (sub === s || sub === '*'));
    if (hit) return hit[2];
  }
  return undefined;
}

export function serveOpenAPIV2(x: Exchange, headers: RequestHeaders, doc: Record<string, unknown>): void {
  x.headers.push(['Vary', 'Accept']);
  const type = chosen(headers.accept);
  if (!type) return send(x, 406, 'text/plain; charset=utf-8', '');
  const e = encodingsOf(doc);
  x.headers.push(['Etag', e.etag]);
  if (headers.ifNoneMatch?.split(',').some((t) => t.trim() === e.etag || t.trim() === '*')) {
    return send(x, 304, type, '');
  }
  if (type === OPENAPI_V2_PROTOBUF_RETURNED) return send(x, 200, type, (e.protobuf ??= encodeOpenAPIV2(doc)));
  send(x, 200, type, e.json);
}
