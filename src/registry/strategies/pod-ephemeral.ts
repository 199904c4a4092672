/**
 * The pods/ephemeralcontainers subresource (what `kubectl debug` writes) and the gated
 * pods/resize one, as upstream's podEphemeralContainersStrategy and podResizeStrategy: a
 * write changes only its part of the stored pod; everything else the client sent is ignored.
 * Validation and messages follow ValidatePodEphemeralContainersUpdate and
 * validateEphemeralContainers (pkg/apis/core/validation).
 */
import { defaultPodSpec } from './pod-defaults.js';
import { asArray, qosClass, validatePodSpec } from './pod-spec.js';
import { dnsLabel, duplicate, forbidden, invalid, required, same, type Cause } from './field-errors.js';

/** The parts of a container these rules read (plain JSON objects). */
interface ContainerLike {
  name?: unknown;
  image?: unknown;
  targetContainerName?: unknown;
  volumeMounts?: unknown;
  [field: string]: unknown;
}
interface PodSpecLike {
  containers?: unknown;
  initContainers?: unknown;
  ephemeralContainers?: unknown;
  [field: string]: unknown;
}
interface PodLike {
  metadata?: { annotations?: Record<string, string> };
  /** always set on a stored pod (prepareForCreate defaults it) */
  spec?: PodSpecLike;
  status?: { qosClass?: string };
}

const containers = (v: unknown): ContainerLike[] =>
  asArray(v).filter((c): c is ContainerLike => !!c && typeof c === 'object');

/** EphemeralContainerCommon fields an ephemeral container may not set, in Go field order. */
const NOT_ALLOWED = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
];
const EPHEMERAL_FORBIDDEN = 'cannot be set for an Ephemeral Container';

/** upstream dropNonEphemeralContainerUpdates: the stored pod with the written ephemeral containers. */
export function ephemeralContainersUpdate<P extends PodLike>(obj: Partial<PodLike> | undefined, old: P): P {
  const next = structuredClone(old);
  const spec = (next.spec ??= {});
  const written = obj?.spec?.ephemeralContainers;
  if (written === undefined || written === null) delete spec.ephemeralContainers;
  else spec.ephemeralContainers = written;
  defaultPodSpec(spec);
  return next;
}

/** A Go zero value, as validateFieldAllowList compares (an empty struct is zero, an empty list is not). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  return typeof v === 'object' && !Array.isArray(v) && Object.values(v as object).every(isZero);
}

/** validateEphemeralContainers: container rules, names unique across all containers, the allow list. */
export function validateEphemeralContainers(spec: PodSpecLike | undefined, path: string): Cause[] {
  const list = containers(spec?.ephemeralContainers);
  if (!spec || list.length === 0) return [];
  const others = new Set([...containers(spec.containers), ...containers(spec.initContainers)].map((c) => c.name));
  const all = new Set(others);
  const out: Cause[] = [];
  list.forEach((ec, i) => {
    const at = `${path}[${i}]`;
    if (!ec.name) out.push(required(`${at}.name`));
    else out.push(...dnsLabel(`${at}.name`, String(ec.name)));
    if (!ec.image) out.push(required(`${at}.image`));
    if (ec.name) {
      if (all.has(ec.name)) out.push(duplicate(`${at}.name`, ec.name));
      else all.add(ec.name);
    }
    if (ec.targetContainerName && !others.has(ec.targetContainerName)) {
      out.push({
        reason: 'FieldValueNotFound',
        message: `Not found: ${JSON.stringify(ec.targetContainerName)}`,
        field: `${at}.targetContainerName`,
      });
    }
    for (const f of NOT_ALLOWED) if (!isZero(ec[f])) out.push(forbidden(`${at}.${f}`, EPHEMERAL_FORBIDDEN));
    containers(ec.volumeMounts).forEach((vm, j) => {
      for (const f of ['subPath', 'subPathExpr'])
        if (vm[f]) out.push(forbidden(`${at}.volumeMounts[${j}].${f}`, EPHEMERAL_FORBIDDEN));
    });
  });
  return out;
}

/** ValidatePodEphemeralContainersUpdate: the pod stays valid; existing ephemeral containers neither go nor change. */
export function validateEphemeralContainersUpdate(next: PodLike, old: PodLike): Cause[] {
  if (old.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined)
    return [forbidden('', 'static pods do not support ephemeral containers')];
  const path = 'spec.ephemeralContainers';
  const out = [...validatePodSpec(next.spec, 'spec'), ...validateEphemeralContainers(next.spec, path)];
  const byName = new Map(containers(next.spec?.ephemeralContainers).map((c) => [c.name, c]));
  for (const was of containers(old.spec?.ephemeralContainers)) {
    const now = byName.get(was.name);
    // upstream appends a diff of the two containers after the newline
    if (now === undefined)
      out.push(forbidden(path, `existing ephemeral containers ${JSON.stringify(was.name)} may not be removed\n`));
    else if (!same(now, was))
      out.push(forbidden(path, `existing ephemeral containers ${JSON.stringify(was.name)} may not be changed\n`));
  }
  return out;
}

/** podResizeStrategy (InPlacePodVerticalScaling): the stored pod with the written containers' resources and resize policies. */
export function resizeUpdate<P extends PodLike>(obj: Partial<PodLike> | undefined, old: P): P {
  const next = structuredClone(old);
  const written = new Map(containers(obj?.spec?.containers).map((c) => [c.name, c]));
  for (const c of containers(next.spec?.containers)) {
    const w = written.get(c.name);
    if (!w) continue;
    for (const f of ['resources', 'resizePolicy']) {
      if (w[f] === undefined) delete c[f];
      else c[f] = w[f];
    }
  }
  return next;
}

/** ValidatePodResize (the part this server can judge): the QoS class may not change. */
export function validateResize(next: PodLike, old: PodLike): Cause[] {
  const out = validatePodSpec(next.spec, 'spec');
  const was = old.status?.qosClass ?? qosClass(old.spec);
  if (qosClass(next.spec) !== was)
    out.push(invalid('spec', qosClass(next.spec), 'Pod QOS Class may not change as a result of resizing'));
  return out;
}
