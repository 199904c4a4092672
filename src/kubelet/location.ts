/**
 * Where a connect subresource goes (upstream pkg/registry/core/{pod,node,service} ResourceLocation,
 * LogLocation, streamLocation): pure functions of the stored objects and the request options,
 * throwing upstream's StatusErrors. The kubelet client (client.ts) dials what they return.
 */
import { StatusError, errors } from '../api/status.js';
import { forbidden, invalid, type Cause } from '../registry/strategies/field-errors.js';

interface Container {
  name: string;
  ports?: { containerPort?: number; name?: string }[];
}
export interface PodLike {
  metadata: { name: string; namespace: string };
  spec?: {
    nodeName?: string;
    containers?: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
  };
  status?: { podIP?: string; podIPs?: { ip: string }[] };
}
export interface NodeLike {
  metadata: { name: string; labels?: Record<string, string> };
  status?: {
    addresses?: { type: string; address: string }[];
    daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
  };
}

/** A node agent's HTTPS endpoint (upstream ConnectionInfo). */
export interface NodeConnection {
  host: string;
  port: number;
}

/** A Status of a plain Go error (upstream ErrorToAPIStatus: 500, no reason). */
export function plainError(message: string, code = 500): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code });
}

/** Upstream GetPreferredNodeAddress + NodeConnectionInfoGetter. */
export function nodeConnection(node: NodeLike, preferred: readonly string[], defaultPort: number): NodeConnection {
  const addresses = node.status?.addresses ?? [];
  let host: string | undefined;
  for (const type of preferred) {
    host = addresses.find((a) => a.type === type && a.address)?.address;
    // upstream: a Hostname preference falls back to the hostname label
    if (!host && type === 'Hostname') host = node.metadata.labels?.['kubernetes.io/hostname'];
    if (host) break;
  }
  if (!host) {
    const known = addresses.map((a) => `{${a.type} ${a.address}}`).join(' ');
    throw plainError(`no preferred addresses found; known addresses: [${known}]`);
  }
  const advertised = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  return { host, port: advertised && advertised > 0 ? advertised : defaultPort };
}

/** Every container name of the pod in upstream's VisitContainers order (init, regular, ephemeral). */
function containerNames(pod: PodLike): string[] {
  const s = pod.spec ?? {};
  return [...(s.initContainers ?? []), ...(s.containers ?? []), ...(s.ephemeralContainers ?? [])].map((c) => c.name);
}

/** Upstream validateContainer: the named container, or the only one. */
export function validateContainer(container: string, pod: PodLike): string {
  const name = pod.metadata.name;
  if (container) {
    if (!containerNames(pod).includes(container))
      throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  const regular = pod.spec?.containers ?? [];
  if (regular.length === 1) return regular[0]!.name;
  if (regular.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
  throw errors.badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`,
  );
}

const LOG_FLAGS = ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend'] as const;
const LOG_INTS = ['sinceSeconds', 'tailLines', 'limitBytes'] as const;

export interface LogOptions {
  container: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  insecureSkipTLSVerifyBackend: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
}

function parseBool(name: string, v: string): boolean {
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(v)) return true;
  if (['false', '0', 'f', 'F', 'FALSE', 'False', ''].includes(v)) return false;
  throw errors.badRequest(`${name}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** The PodLogOptions of the query, validated as upstream ValidatePodLogOptions (422 PodLogOptions). */
export function logOptions(name: string, q: URLSearchParams): LogOptions {
  const o: LogOptions = {
    container: q.get('container') ?? '',
    follow: false,
    previous: false,
    timestamps: false,
    insecureSkipTLSVerifyBackend: false,
  };
  for (const f of LOG_FLAGS) {
    const v = q.get(f);
    if (v !== null) o[f] = parseBool(f, v);
  }
  for (const f of LOG_INTS) {
    const v = q.get(f);
    if (v === null) continue;
    if (!/^-?[0-9]+$/.test(v))
      throw errors.badRequest(`${f}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    o[f] = Number(v);
  }
  const since = q.get('sinceTime');
  if (since !== null) {
    const t = Date.parse(since);
    if (Number.isNaN(t))
      throw errors.badRequest(
        `sinceTime: parsing time ${JSON.stringify(since)} as "2006-01-02T15:04:05Z07:00": cannot parse`,
      );
    o.sinceTime = new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  const causes: Cause[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0)
    causes.push(invalid('tailLines', o.tailLines, 'must be greater than or equal to 0'));
  if (o.limitBytes !== undefined && o.limitBytes < 1)
    causes.push(invalid('limitBytes', o.limitBytes, 'must be greater than 0'));
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined)
    causes.push(forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1)
    causes.push(invalid('sinceSeconds', o.sinceSeconds, 'must be greater than 0'));
  if (causes.length) throw errors.invalid({ kind: 'PodLogOptions', name }, causes);
  return o;
}

/** The node agent's containerLogs path and query (upstream LogLocation: keys in url.Values order). */
export function logPath(pod: PodLike, container: string, o: LogOptions): string {
  const p = new URLSearchParams();
  if (o.follow) p.append('follow', 'true');
  if (o.limitBytes !== undefined) p.append('limitBytes', String(o.limitBytes));
  if (o.previous) p.append('previous', 'true');
  if (o.sinceSeconds !== undefined) p.append('sinceSeconds', String(o.sinceSeconds));
  if (o.sinceTime !== undefined) p.append('sinceTime', o.sinceTime);
  if (o.tailLines !== undefined) p.append('tailLines', String(o.tailLines));
  if (o.timestamps) p.append('timestamps', 'true');
  const query = p.toString();
  return `/containerLogs/${pod.metadata.namespace}/${pod.metadata.name}/${container}${query ? `?${query}` : ''}`;
}

/**
 * exec/attach/portforward on the node agent (upstream streamLocation / PortForwardLocation):
 * the kubelet's parameter names (input/output/error/tty, command repeated, port).
 */
export function streamPath(kind: 'exec' | 'attach' | 'portforward', pod: PodLike, q: URLSearchParams): string {
  const name = pod.metadata.name;
  const p = new URLSearchParams();
  let path: string;
  if (kind === 'portforward') {
    const ports = q
      .getAll('ports')
      .flatMap((v) => v.split(','))
      .filter((v) => v !== '');
    if (ports.length) p.append('port', ports.join(','));
    path = `/portForward/${pod.metadata.namespace}/${name}`;
  } else {
    const container = validateContainer(q.get('container') ?? '', pod);
    if (kind === 'exec') for (const c of q.getAll('command')) p.append('command', c);
    const flag = (k: string) => {
      const v = q.get(k);
      return v !== null && parseBool(k, v);
    };
    if (flag('stderr')) p.append('error', '1');
    if (flag('stdin')) p.append('input', '1');
    if (flag('stdout')) p.append('output', '1');
    if (flag('tty')) p.append('tty', '1');
    path = `/${kind}/${pod.metadata.namespace}/${name}/${container}`;
  }
  if (!pod.spec?.nodeName) throw errors.badRequest(`pod ${name} does not have a host assigned`);
  const query = p.toString();
  return query ? `${path}?${query}` : path;
}

/** `[scheme:]name[:port]` of a proxy subresource (upstream SplitSchemeNamePort). */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } {
  const parts = id.split(':');
  if (parts.length === 1) return { scheme: '', name: parts[0]!, port: '' };
  if (parts.length === 2) return { scheme: '', name: parts[0]!, port: parts[1]! };
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https'))
    return { scheme: parts[0], name: parts[1]!, port: parts[2]! };
  throw errors.badRequest(`invalid request ${JSON.stringify(id)}`);
}

/**
 * Upstream IsProxyableIP / IsGlobalUnicast: loopback, link-local, unspecified and multicast
 * addresses are not proxied to. allowLoopback exists only for tests on one machine.
 */
export function proxyableIP(ip: string | undefined, allowLoopback: boolean): boolean {
  if (!ip) return false;
  if (/^127\./.test(ip) || ip === '::1') return allowLoopback;
  if (/^(0\.|169\.254\.|22[4-9]\.|2[3-5][0-9]\.)/.test(ip) || ip === '::' || /^f[ef][0-9a-f]{2}:/i.test(ip))
    return false;
  return /^[0-9.]+$/.test(ip) || ip.includes(':');
}

/** pods/P[:port]/proxy: the pod IP and the port named, else the first declared container port. */
export function podProxyTarget(pod: PodLike, port: string, allowLoopback: boolean): { host: string; port: number } {
  let p = port;
  if (!p) p = String((pod.spec?.containers ?? []).find((c) => c.ports?.length)?.ports?.[0]?.containerPort ?? '');
  const ip = pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP;
  if (!proxyableIP(ip, allowLoopback)) throw errors.badRequest('address not allowed');
  if (!/^[0-9]+$/.test(p)) {
    // a named port: upstream looks it up among the container ports
    const named = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? []).find((cp) => cp.name === p)?.containerPort;
    if (p && !named) throw errors.badRequest(`invalid pod request ${JSON.stringify(`${pod.metadata.name}:${p}`)}`);
    return { host: ip!, port: named ?? 80 };
  }
  return { host: ip!, port: Number(p) };
}

interface EndpointsLike {
  subsets?: { addresses?: { ip: string }[]; ports?: { name?: string; port: number }[] }[];
}
interface ServiceLike {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}

/** services/S[:port]/proxy: a ready endpoint address of the service port (upstream service ResourceLocation). */
export function serviceProxyTarget(
  name: string,
  svc: ServiceLike,
  eps: EndpointsLike | undefined,
  port: string,
  allowLoopback: boolean,
  pick: (n: number) => number,
): { host: string; port: number } {
  // the port part names a service port (by name or number); upstream maps it to its endpoint port name
  let portName = port;
  const sp = svc.spec?.ports ?? [];
  if (port && /^[0-9]+$/.test(port)) {
    const byNumber = sp.find((p) => String(p.port) === port);
    if (!byNumber) throw errors.notFoundMessage(`no service port ${port} found for service "${name}"`);
    portName = byNumber.name ?? '';
  } else if (port && !sp.some((p) => p.name === port)) {
    throw errors.notFoundMessage(`no service port ${JSON.stringify(port)} found for service "${name}"`);
  }
  for (const ss of eps?.subsets ?? []) {
    for (const p of ss.ports ?? []) {
      if ((p.name ?? '') !== portName) continue;
      const ready = (ss.addresses ?? []).filter((a) => proxyableIP(a.ip, allowLoopback));
      if (ready.length === 0) continue;
      return { host: ready[pick(ready.length)]!.ip, port: p.port };
    }
  }
  throw errors.serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
}
