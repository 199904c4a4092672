/**
 * networking v1 Ingress: a default backend or rules; each HTTP path has a pathType (Exact,
 * Prefix, ImplementationSpecific) and an absolute path, and exactly one kind of backend.
 */
import type { HTTPIngressPath, Ingress, IngressBackend, IngressRule } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import {
  dns1035Label,
  dnsSubdomain,
  invalid,
  notSupported,
  portNumber,
  portNumOrName,
  required,
  type Cause,
} from './field-errors.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const BAD_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const BAD_SUFFIXES = ['/..', '/.'];

function validatePath(p: HTTPIngressPath | undefined, at: string): Cause[] {
  if (!p?.pathType) return [required(`${at}.pathType`, 'pathType must be specified')];
  const out: Cause[] = [];
  const path = p.path ?? '';
  switch (p.pathType) {
    case 'Exact':
    case 'Prefix':
      if (!path.startsWith('/')) out.push(invalid(`${at}.path`, path, 'must be an absolute path'));
      for (const seq of BAD_SEQUENCES)
        if (path.includes(seq)) out.push(invalid(`${at}.path`, path, `must not contain '${seq}'`));
      for (const suf of BAD_SUFFIXES)
        if (path.endsWith(suf)) out.push(invalid(`${at}.path`, path, `cannot end with '${suf}'`));
      break;
    case 'ImplementationSpecific':
      if (path && !path.startsWith('/')) out.push(invalid(`${at}.path`, path, 'must be an absolute path'));
      break;
    default:
      out.push(notSupported(`${at}.pathType`, p.pathType, PATH_TYPES));
  }
  return [...out, ...validateBackend(p.backend, `${at}.backend`)];
}

function validateBackend(b: IngressBackend | undefined, at: string): Cause[] {
  const svc = b?.service;
  if (b?.resource && svc) return [invalid(at, '', 'cannot set both resource and service backends')];
  if (b?.resource)
    return b.resource.kind && b.resource.name ? [] : [required(`${at}.resource`, 'kind and name are required')];
  if (!svc) return [invalid(at, '', 'resource or service backend is required')];
  const out: Cause[] = svc.name ? dns1035Label(`${at}.service.name`, svc.name) : [required(`${at}.service.name`)];
  const { name, number } = svc.port ?? {};
  if (name && number) out.push(invalid(at, '', 'cannot set both port name & port number'));
  else if (name) out.push(...portNumOrName(`${at}.service.port.name`, name));
  else if (number) out.push(...portNumber(`${at}.service.port.number`, number));
  else out.push(required(`${at}.service.port`, 'port name or number is required'));
  return out;
}

export function validateIngress(obj: Ingress): Cause[] {
  const spec = obj.spec ?? {};
  const rules: (IngressRule | undefined)[] = Array.isArray(spec.rules) ? spec.rules : [];
  const out: Cause[] = [];
  if (!spec.defaultBackend && rules.length === 0)
    out.push(invalid('spec.rules', rules, 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend) out.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r, i) => {
    const at = `spec.rules[${i}]`;
    if (r?.host) {
      const host = String(r.host);
      if (/^\d+\.\d+\.\d+\.\d+$/.test(host))
        out.push(invalid(`${at}.host`, host, 'must be a DNS name, not an IP address'));
      else out.push(...dnsSubdomain(`${at}.host`, host.startsWith('*.') ? host.slice(2) : host));
    }
    if (!r?.http) return;
    const paths: (HTTPIngressPath | undefined)[] = Array.isArray(r.http.paths) ? r.http.paths : [];
    if (paths.length === 0) out.push(required(`${at}.http.paths`));
    paths.forEach((p, j) => out.push(...validatePath(p, `${at}.http.paths[${j}]`)));
  });
  return out;
}

export const ingressStrategy: ResourceStrategy<Ingress> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    obj.status = { loadBalancer: {} };
  },
  validate: validateIngress,
};
