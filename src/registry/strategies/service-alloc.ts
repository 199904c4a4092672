/**
 * ClusterIP and NodePort allocation for Services. Nothing is kept besides the Services
 * themselves: what is taken is read from every other stored (or batch-staged) Service, so a
 * deleted Service frees its IP and ports and a dry run (never stored) reserves nothing.
 * Free values are handed out lowest first.
 */
import type { DefaultedService, Service, ServicePort } from '../../api/kinds.js';
import { errors } from '../../api/status.js';
import { invalid, type Cause } from './field-errors.js';

/** The range's first usable address is kept for the API server's own Service (upstream's .1). */
/** The API server's own Service lives in default under the product name (strategy config). */
export const API_SERVICE_NAMESPACE = 'default';

export interface IPRange {
  cidr: string;
  first: number;
  last: number;
}

export function ipToInt(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Usable addresses of a CIDR: without the network and broadcast addresses (for /30 and wider). */
export function parseRange(cidr: string): IPRange {
  const [addr, bits] = cidr.split('/');
  const prefix = Number(bits);
  const size = 2 ** (32 - prefix);
  const base = Math.floor(ipToInt(addr!)! / size) * size;
  return size >= 4
    ? { cidr: `${intToIp(base)}/${prefix}`, first: base + 1, last: base + size - 2 }
    : { cidr: `${intToIp(base)}/${prefix}`, first: base, last: base + size - 1 };
}

function isSelf(svc: Service, other: Service): boolean {
  return other.metadata?.namespace === svc.metadata?.namespace && other.metadata?.name === svc.metadata?.name;
}

function isApiService(svc: Service, name: string): boolean {
  return svc.metadata?.namespace === API_SERVICE_NAMESPACE && svc.metadata?.name === name;
}

/**
 * Gives svc.spec.clusterIP (and clusterIPs) an address: the requested one if free and in the
 * range (else 422 on spec.clusterIPs), or the lowest free one (else 500 range is full).
 */
export function allocateClusterIP(
  svc: DefaultedService,
  cidr: string,
  existing: Iterable<Service>,
  apiServiceName = 'platform',
): void {
  const range = parseRange(cidr);
  const used = new Set<number>();
  for (const o of existing) {
    if (isSelf(svc, o)) continue;
    for (const ip of o.spec?.clusterIPs ?? [o.spec?.clusterIP]) {
      const n = typeof ip === 'string' ? ipToInt(ip) : undefined;
      if (n !== undefined) used.add(n);
    }
  }
  if (!isApiService(svc, apiServiceName)) used.add(range.first);
  const requested = svc.spec.clusterIP;
  if (requested) {
    const n = ipToInt(requested)!;
    const fail = (why: string) =>
      errors.invalid({ kind: 'Service', name: svc.metadata.name }, [
        invalid('spec.clusterIPs', [requested], `failed to allocate IP ${requested}: ${why}`),
      ]);
    if (n < range.first || n > range.last)
      throw fail(`the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${range.cidr}`);
    if (used.has(n)) throw fail('provided IP is already allocated');
    svc.spec.clusterIPs = [requested];
    return;
  }
  for (let n = range.first; n <= range.last; n++) {
    if (!used.has(n)) {
      svc.spec.clusterIP = intToIp(n);
      svc.spec.clusterIPs = [svc.spec.clusterIP];
      return;
    }
  }
  throw errors.internal('failed to allocate a serviceIP: range is full');
}

/** `<protocol>/<port>` taken by other Services (node ports are per protocol, as upstream). */
function usedNodePorts(svc: Service, existing: Iterable<Service>): Set<number> {
  const used = new Set<number>();
  for (const o of existing) {
    if (isSelf(svc, o)) continue;
    for (const p of o.spec?.ports ?? []) if (p?.nodePort) used.add(p.nodePort);
    if (o.spec?.healthCheckNodePort) used.add(o.spec.healthCheckNodePort);
  }
  return used;
}

/**
 * Fills spec.ports[*].nodePort (and healthCheckNodePort when needed): requested ports are
 * checked (422 on the port's path), missing ones get the lowest free port (else 500).
 */
export function allocateNodePorts(
  svc: DefaultedService,
  portRange: string,
  existing: Iterable<Service>,
  wantHealthCheck: boolean,
): void {
  const [lo, hi] = portRange.split('-').map(Number) as [number, number];
  const used = usedNodePorts(svc, existing);
  const causes: Cause[] = [];
  const ports: ServicePort[] = svc.spec.ports ?? [];
  ports.forEach((p, i) => {
    if (!p?.nodePort) return;
    if (p.nodePort < lo || p.nodePort > hi)
      causes.push(
        invalid(
          `spec.ports[${i}].nodePort`,
          p.nodePort,
          `provided port is not in the valid range. The range of valid ports is ${portRange}`,
        ),
      );
    else if (used.has(p.nodePort))
      causes.push(invalid(`spec.ports[${i}].nodePort`, p.nodePort, 'provided port is already allocated'));
  });
  if (causes.length) throw errors.invalid({ kind: 'Service', name: svc.metadata.name }, causes);
  const mine = new Set<number>(ports.map((p) => p?.nodePort).filter((n): n is number => Boolean(n)));
  const next = (): number => {
    for (let n = lo; n <= hi; n++)
      if (!used.has(n) && !mine.has(n)) {
        mine.add(n);
        return n;
      }
    throw errors.internal('failed to allocate a nodePort: range is full');
  };
  ports.forEach((p, i) => {
    if (!p || typeof p !== 'object' || p.nodePort) return;
    // the same port number under another protocol shares its node port
    const twin = ports.slice(0, i).find((q) => q?.port === p.port && q?.protocol !== p.protocol && q?.nodePort);
    p.nodePort = twin ? twin.nodePort : next();
  });
  if (wantHealthCheck && !svc.spec.healthCheckNodePort) svc.spec.healthCheckNodePort = next();
}
