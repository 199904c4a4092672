/**
 * Services: upstream defaults, ValidateService's port and type rules, ClusterIP and NodePort
 * allocation (service-alloc.ts) on create and on updates that start needing them, and an
 * immutable spec.clusterIP once set.
 */
import type { DefaultedService, Service, ServicePort, ServiceSpec } from '../../api/kinds.js';
import { errors } from '../../api/status.js';
import { DEFAULT_STRATEGY, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import {
  dnsLabel,
  dnsSubdomain,
  duplicate,
  forbidden,
  invalid,
  notSupported,
  portNumber,
  portNumOrName,
  required,
  type Cause,
} from './field-errors.js';
import { allocateClusterIP, allocateNodePorts, ipToInt } from './service-alloc.js';

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const AFFINITIES = ['ClientIP', 'None'];

const needsIP = (svc: Service) => svc.spec?.type !== 'ExternalName';
const needsNodePorts = (svc: Service) => svc.spec?.type === 'NodePort' || svc.spec?.type === 'LoadBalancer';
const isHeadless = (svc: Service) => svc.spec?.clusterIP === 'None';

/** spec set (an empty one when absent): the shape carryOver reads. */
function ensureSpec(svc: Service): asserts svc is Service & { spec: ServiceSpec } {
  svc.spec ??= {};
}

/**
 * The spec and its ports copied (one level each): an update's object shares what a patch left
 * alone with the stored one, and a change of type writes node ports into (or out of) ports the
 * patch never touched. Services are small; the copy is a few objects.
 */
function ownSpec(svc: Service & { spec: ServiceSpec }): void {
  const spec = { ...svc.spec };
  if (Array.isArray(spec.ports)) spec.ports = spec.ports.map((p) => (p && typeof p === 'object' ? { ...p } : p));
  svc.spec = spec;
}

/** Upstream SetDefaults_Service plus clusterIPs/ipFamilies for a single-stack IPv4 cluster. */
function defaultService(svc: Service): asserts svc is Service & { spec: ServiceSpec } {
  const spec = (svc.spec ??= {});
  spec.type ||= 'ClusterIP';
  spec.sessionAffinity ||= 'None';
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!p || typeof p !== 'object') continue;
    p.protocol ||= 'TCP';
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (!needsIP(svc)) return;
  if (!spec.clusterIP && Array.isArray(spec.clusterIPs) && spec.clusterIPs[0]) spec.clusterIP = spec.clusterIPs[0];
  if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
  spec.ipFamilies ??= ['IPv4'];
  spec.ipFamilyPolicy ??= 'SingleStack';
  spec.internalTrafficPolicy ??= 'Cluster';
  if (needsNodePorts(svc)) spec.externalTrafficPolicy ||= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
}

export function validateService(svc: Service): Cause[] {
  const spec = svc.spec ?? {};
  const out: Cause[] = [];
  if (!TYPES.includes(spec.type as string)) out.push(notSupported('spec.type', spec.type ?? '', TYPES));
  if (!AFFINITIES.includes(spec.sessionAffinity as string))
    out.push(notSupported('spec.sessionAffinity', spec.sessionAffinity ?? '', AFFINITIES));
  const ports: ServicePort[] = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0 && !isHeadless(svc) && spec.type !== 'ExternalName') out.push(required('spec.ports'));
  out.push(...validatePorts(svc, ports), ...validateIPs(svc));
  if (spec.type === 'ExternalName') {
    if (!spec.externalName) out.push(required('spec.externalName'));
    else out.push(...dnsSubdomain('spec.externalName', String(spec.externalName).replace(/\.$/, '')));
  }
  return out;
}

function validatePorts(svc: Service, ports: ServicePort[]): Cause[] {
  const out: Cause[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !p?.name) out.push(required(`${at}.name`));
    else if (p?.name) {
      out.push(...dnsLabel(`${at}.name`, p.name));
      if (names.has(p.name)) out.push(duplicate(`${at}.name`, p.name));
      names.add(p.name);
    }
    out.push(...portNumber(`${at}.port`, p?.port));
    if (!p?.protocol) out.push(required(`${at}.protocol`));
    else if (!PROTOCOLS.includes(p.protocol)) out.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
    if (p?.targetPort !== undefined) out.push(...portNumOrName(`${at}.targetPort`, p.targetPort));
    const key = `${p?.port}/${p?.protocol}`;
    if (keys.has(key)) out.push(duplicate(at, { port: p?.port, protocol: p?.protocol }));
    keys.add(key);
    if (p?.nodePort) {
      if (!needsNodePorts(svc))
        out.push(forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${svc.spec!.type}'`));
      else if (nodePorts.has(`${p.nodePort}/${p.protocol}`)) out.push(duplicate(`${at}.nodePort`, p.nodePort));
      nodePorts.add(`${p.nodePort}/${p.protocol}`);
    }
  });
  return out;
}

function validateIPs(svc: Service): Cause[] {
  const spec = svc.spec ?? {};
  if (!needsIP(svc)) {
    return spec.clusterIP || spec.clusterIPs?.length
      ? [forbidden('spec.clusterIPs', 'may not be set for ExternalName services')]
      : [];
  }
  const ip = spec.clusterIP;
  if (!ip) return [];
  if (ip === 'None')
    return needsNodePorts(svc)
      ? [invalid('spec.clusterIPs[0]', ip, "may not be set to 'None' for LoadBalancer or NodePort services")]
      : [];
  if (ipToInt(ip) === undefined)
    return [invalid('spec.clusterIPs[0]', ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
  if (spec.clusterIPs && spec.clusterIPs[0] !== ip)
    return [invalid('spec.clusterIPs', spec.clusterIPs, 'element [0] must match clusterIP')];
  return [];
}

/** the other Services (the service store holds Services only) */
const servicesOf = (ctx: StrategyContext): Iterable<Service> => ctx.existing() as Iterable<Service>;

/** Allocates what the service needs and does not have yet (skipped when invalid: validation reports). */
function allocate(svc: DefaultedService, old: Service | undefined, ctx: StrategyContext): void {
  if (validateService(svc).length) return;
  const spec = svc.spec;
  const oldIP = old && needsIP(old) ? old.spec?.clusterIP : undefined;
  if (needsIP(svc) && !isHeadless(svc) && (!oldIP || !spec.clusterIP))
    allocateClusterIP(svc, ctx.config.serviceClusterIPRange, servicesOf(ctx), ctx.config.apiServiceName);
  if (needsNodePorts(svc)) {
    const wantHealthCheck = spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
    allocateNodePorts(svc, ctx.config.serviceNodePortRange, servicesOf(ctx), wantHealthCheck);
  }
}

const sameClusterIPs = (a: ServiceSpec, b: ServiceSpec): boolean => {
  const x: unknown[] = a.clusterIPs ?? [],
    y: unknown[] = b.clusterIPs ?? [];
  return x.length === y.length && x.every((ip, i) => ip === y[i]);
};

/**
 * Upstream's service REST beginUpdate and strategy: patchAllocatedValues (what the client left
 * out is kept), normalizeClusterIPs (clusterIP and clusterIPs kept in sync), then
 * dropTypeDependentFields (what the new type no longer needs is wiped unless the client also
 * changed it, which validation then reports).
 */
function carryOver(svc: DefaultedService, old: Service): void {
  const spec = svc.spec;
  const was = old.spec ?? {};
  if (needsIP(old) && needsIP(svc)) {
    if (!spec.clusterIP && was.clusterIP) spec.clusterIP = was.clusterIP;
    if (!spec.clusterIPs?.length && was.clusterIPs?.length) spec.clusterIPs = was.clusterIPs;
  }
  normalizeClusterIPs(spec, was);
  if (needsIP(old) && !needsIP(svc)) {
    if (sameClusterIPs(was, spec)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    // an empty clusterIP is no value (upstream's omitempty drops it)
    if (spec.clusterIP === '') delete spec.clusterIP;
    for (const f of ['ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy'] as const)
      if (JSON.stringify(spec[f]) === JSON.stringify(was[f])) delete spec[f];
  }
  const byName = new Map<string, number | undefined>((was.ports ?? []).map((p) => [p?.name ?? '', p?.nodePort]));
  for (const p of spec.ports ?? []) {
    if (!p || typeof p !== 'object') continue;
    if (needsNodePorts(old) && needsNodePorts(svc) && !p.nodePort && byName.get(p.name ?? ''))
      p.nodePort = byName.get(p.name ?? '');
    if (needsNodePorts(old) && !needsNodePorts(svc) && p.nodePort && p.nodePort === byName.get(p.name ?? ''))
      delete p.nodePort;
  }
}

/** Upstream normalizeClusterIPs on update: an old client's lone clusterIP, or a cleared one, updates clusterIPs. */
function normalizeClusterIPs(spec: ServiceSpec, was: ServiceSpec): void {
  if (was.clusterIPs?.length && !spec.clusterIPs?.length && was.clusterIP === spec.clusterIP)
    spec.clusterIPs = was.clusterIPs;
  if ((was.clusterIP ?? '') === (spec.clusterIP ?? '')) return;
  if (was.clusterIP && !spec.clusterIP && sameClusterIPs(was, spec)) delete spec.clusterIPs;
  if (spec.clusterIP && sameClusterIPs(was, spec)) spec.clusterIPs = [spec.clusterIP];
}

/** Upstream validateUpgradeDowngradeClusterIPs (single-stack: the primary address is fixed once set). */
function validateClusterIPsUpdate(svc: Service, old: Service): Cause[] {
  if (!needsIP(svc) || !needsIP(old) || (isHeadless(svc) && isHeadless(old))) return [];
  const now: string[] = svc.spec?.clusterIPs ?? [];
  const was: string[] = old.spec?.clusterIPs ?? [];
  const at = (i: number, message: string) => invalid(`spec.clusterIPs[${i}]`, now, message);
  if (now.length === was.length)
    return was.flatMap((ip, i) => (ip !== now[i] ? [at(i, 'may not change once set')] : []));
  const out: Cause[] = [];
  if (now.length < was.length) {
    if (now.length === 0) out.push(at(0, 'primary clusterIP can not be unset'));
    else if (now[0] !== was[0]) out.push(at(0, 'may not change once set'));
    if (now.length === 1 && svc.spec?.ipFamilyPolicy !== 'SingleStack')
      out.push(at(0, "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP"));
  } else if (was.length > 0 && now[0] !== was[0]) out.push(at(0, 'may not change once set'));
  return out;
}

export const serviceStrategy: ResourceStrategy<Service> = {
  ...DEFAULT_STRATEGY,
  returnDeletedObject: true,
  nameRule: 'label',
  prepareForCreate(obj, ctx) {
    defaultService(obj);
    obj.status = { loadBalancer: {} };
    allocate(obj, undefined, ctx);
  },
  prepareForUpdate(obj, old, ctx) {
    ensureSpec(obj);
    ownSpec(obj);
    carryOver(obj, old);
    defaultService(obj);
    allocate(obj, old, ctx);
  },
  validate: validateService,
  validateUpdate: validateClusterIPsUpdate,
  getSubresource(name, obj) {
    if (name !== 'proxy') return undefined;
    throw errors.serviceUnavailable(`no endpoints available for service ${JSON.stringify(obj.metadata.name)}`);
  },
};
