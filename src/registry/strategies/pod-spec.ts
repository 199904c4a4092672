/**
 * PodSpec rules shared by Pods and every pod template (Deployment, Job, CronJob, ...):
 * container names, images, ports and resource quantities, with the upstream field paths.
 */
import type { Container, ContainerPort, PodSpecShape, ResourceRequirements } from '../../api/kinds.js';
import { dnsLabel, duplicate, invalid, notSupported, portNumber, required, type Cause } from './field-errors.js';
import { labelKey, labelValue } from './label-selector.js';
import { parseQuantity, quantityValue } from './quantity.js';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'Never', 'OnFailure'];
const STANDARD_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage', 'pods']);

/** The pod's QoS class from its containers' cpu and memory requests and limits. */
export function qosClass(spec: PodSpecShape | undefined): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [
    ...asArray<Container | undefined>(spec?.containers),
    ...asArray<Container | undefined>(spec?.initContainers),
  ];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const limits: Record<string, unknown> = c?.resources?.limits ?? {};
    const requests: Record<string, unknown> = c?.resources?.requests ?? {};
    for (const r of ['cpu', 'memory']) {
      if (limits[r] !== undefined || requests[r] !== undefined) any = true;
      const limit = quantityValue(limits[r]);
      const request = requests[r] === undefined ? limit : quantityValue(requests[r]);
      if (limit === undefined || request !== limit) guaranteed = false;
    }
  }
  return !any ? 'BestEffort' : guaranteed ? 'Guaranteed' : 'Burstable';
}

/** v when it is an array (of T, as the caller's shape says), else []. */
export function asArray<T = unknown>(v: unknown): T[] {
  return Array.isArray(v) ? v : [];
}

/**
 * ValidatePodSpec (the commonly met part); path is where the spec sits, e.g. `spec.template.spec`.
 * previous: the spec of a validated object the one checked replaces (src/registry/validated.ts):
 * a container's ports or resources that are the same node as in its container there passed
 * their rules then (functions of that node alone) and are not checked again.
 */
export function validatePodSpec(spec: PodSpecShape | undefined, path: string, previous?: PodSpecShape): Cause[] {
  const out: Cause[] = [];
  if (!spec || typeof spec !== 'object') return [required(path)];
  const names = new Set<string>();
  if (asArray(spec.containers).length === 0) out.push(required(`${path}.containers`));
  const was = asArray<Container | undefined>(previous?.containers);
  asArray<Container | undefined>(spec.containers).forEach((c, i) =>
    out.push(...validateContainer(c, `${path}.containers[${i}]`, names, was[i])),
  );
  const wasInit = asArray<Container | undefined>(previous?.initContainers);
  asArray<Container | undefined>(spec.initContainers).forEach((c, i) =>
    out.push(...validateContainer(c, `${path}.initContainers[${i}]`, names, wasInit[i])),
  );
  const restart = spec.restartPolicy || 'Always';
  if (!RESTART_POLICIES.includes(restart as string))
    out.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) {
    out.push(...labelKey(`${path}.nodeSelector`, k), ...labelValue(`${path}.nodeSelector`, v));
  }
  return out;
}

function validateContainer(c: Container | undefined, path: string, names: Set<string>, was?: Container): Cause[] {
  const out: Cause[] = [];
  if (!c?.name) out.push(required(`${path}.name`));
  else if (names.has(c.name)) out.push(duplicate(`${path}.name`, c.name));
  else {
    names.add(c.name);
    out.push(...dnsLabel(`${path}.name`, c.name));
  }
  if (!c?.image) out.push(required(`${path}.image`));
  if (c?.ports === undefined || c.ports !== was?.ports)
    out.push(...validatePorts(asArray<ContainerPort | undefined>(c?.ports), `${path}.ports`));
  if (c?.resources === undefined || c.resources !== was?.resources)
    out.push(...validateResources(c?.resources, `${path}.resources`));
  return out;
}

/** Port names unique, containerPort 1-65535, protocol known, containerPort+protocol unique. */
function validatePorts(ports: (ContainerPort | undefined)[], path: string): Cause[] {
  const out: Cause[] = [];
  const names = new Set<string>();
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const at = `${path}[${i}]`;
    if (p?.name) {
      if (names.has(p.name)) out.push(duplicate(`${at}.name`, p.name));
      names.add(p.name);
    }
    if (p?.containerPort === undefined || p?.containerPort === 0) out.push(required(`${at}.containerPort`));
    else out.push(...portNumber(`${at}.containerPort`, p.containerPort));
    if (p?.hostPort !== undefined && p.hostPort !== 0) out.push(...portNumber(`${at}.hostPort`, p.hostPort));
    const protocol = p?.protocol || 'TCP';
    if (!PROTOCOLS.includes(protocol)) out.push(notSupported(`${at}.protocol`, protocol, PROTOCOLS));
    const key = `${p?.containerPort}/${protocol}`;
    if (seen.has(key)) out.push(duplicate(at, key));
    seen.add(key);
  });
  return out;
}

/** Quantities are non-negative; requests do not exceed limits. */
export function validateResources(res: ResourceRequirements | undefined, path: string): Cause[] {
  if (!res || typeof res !== 'object') return [];
  const out: Cause[] = [];
  const values: Record<'limits' | 'requests', Record<string, number>> = { limits: {}, requests: {} };
  for (const part of ['limits', 'requests'] as const) {
    for (const [name, q] of Object.entries(res[part] ?? {})) {
      const at = `${path}.${part}[${name}]`;
      if (!STANDARD_RESOURCES.has(name) && !name.includes('/') && !name.startsWith('hugepages-')) {
        out.push(invalid(at, name, 'must be a standard resource type or fully qualified'));
      }
      const parsed = parseQuantity(q);
      // an unparseable quantity never gets here through a write: decoding refuses it (400)
      if ('error' in parsed) continue;
      if (parsed.value < 0) out.push(invalid(at, String(q), 'must be greater than or equal to 0'));
      else values[part][name] = parsed.value;
    }
  }
  for (const [name, req] of Object.entries(values.requests)) {
    const limit = values.limits[name];
    if (limit !== undefined && req > limit) {
      out.push(
        invalid(
          `${path}.requests`,
          String(res.requests![name]),
          `must be less than or equal to ${name} limit of ${res.limits![name]}`,
        ),
      );
    }
  }
  return out;
}
