/**
 * Resolves a Service reference (namespace, name, port) to an address to dial, through the
 * front thread's read cache of Services and Endpoints: the first address of a subset that has
 * the port the service port targets (upstream's endpoint routing; there is no cluster network
 * here to reach a ClusterIP). Used by admission webhooks and the aggregation layer; the TLS
 * server name is `<name>.<namespace>.svc`.
 */
import type { ReadCache } from './read-cache.js';

export interface ServiceAddress {
  host: string;
  port: number;
  servername: string;
}

export type ResolveResult =
  | { address: ServiceAddress }
  | { reason: 'ServiceNotFound' | 'ServicePortError' | 'MissingEndpoints'; message: string };

export function resolveService(readCache: ReadCache, namespace: string, name: string, port: number): ResolveResult {
  const sjson = readCache.get('/services', namespace, name, 'v1');
  if (!sjson) return { reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present` };
  const sp = (JSON.parse(sjson).spec?.ports ?? []).find((p: { port?: unknown } | null) => p?.port === port);
  if (!sp)
    return {
      reason: 'ServicePortError',
      message: `service/${name} in "${namespace}" is not listening on port ${port}`,
    };
  const ejson = readCache.get('/endpoints', namespace, name, 'v1');
  for (const ss of ejson ? (JSON.parse(ejson).subsets ?? []) : []) {
    const ip = ss?.addresses?.[0]?.ip;
    const ep = (ss?.ports ?? []).find((p: { name?: unknown } | null) => (sp.name ? p?.name === sp.name : true));
    const target = typeof sp.targetPort === 'number' ? sp.targetPort : ep?.port;
    if (ip && ep && target)
      return {
        address: {
          host: ip.includes(':') ? `[${ip}]` : ip,
          port: ep.port ?? target,
          servername: `${name}.${namespace}.svc`,
        },
      };
  }
  return {
    reason: 'MissingEndpoints',
    message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${sp.name ?? ''}"`,
  };
}
